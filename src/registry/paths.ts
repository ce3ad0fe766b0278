// Znode paths as ZooKeeper's PathUtils checks them, and the parent/name arithmetic the embedded
// store does on them. Paths are absolute, without a trailing slash, empty or relative segments,
// or characters ZooKeeper refuses; a bad one is a BadArguments error, as ZooKeeper answers it.

import { RegistryError } from "./types.ts";

/** Why path is not a valid znode path, or null. The same rules as ZooKeeper's PathUtils. */
export function pathProblem(path: string): string | null {
  if (typeof path !== "string" || path.length === 0) return "empty path";
  if (path[0] !== "/") return "not absolute";
  if (path === "/") return null;
  if (path.endsWith("/")) return "trailing slash";
  for (const segment of path.slice(1).split("/")) {
    if (segment === "") return "empty segment";
    if (segment === "." || segment === "..") return `relative segment "${segment}"`;
  }
  // ZooKeeper refuses these because they do not survive its string handling and display.
  if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path)) {
    return "control or reserved character";
  }
  return null;
}

/** Throws BadArguments unless path is valid; a sequential path is checked with its suffix. */
export function validatePath(path: string, sequential = false): void {
  const why = pathProblem(sequential ? `${path}1` : path);
  if (why !== null) throw new RegistryError("BadArguments", String(path), why);
}

export function parentPath(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function joinPath(parent: string, name: string): string {
  return parent === "/" ? `/${name}` : `${parent}/${name}`;
}
