// Paths and connect strings: ZooKeeper's path rules (PathUtils.validatePath), the chroot, and
// the connect string `host1:port1,host2:port2/chroot` (ConnectStringParser).

import { zkConnectStringHostsMax } from "../util/mod.ts";
import { ZkError } from "./errors.ts";

/** Port a connect-string host without one gets (ZooKeeper's default client port). */
export const defaultClientPort = 2181;

/** Why path is not a valid znode path, or null. The rules of ZooKeeper's PathUtils. */
export function pathProblem(path: string): string | null {
  if (typeof path !== "string" || path.length === 0) return "path must not be empty";
  if (path[0] !== "/") return "path must start with /";
  if (path === "/") return null;
  if (path.endsWith("/")) return "path must not end with /";
  for (const segment of path.slice(1).split("/")) {
    if (segment === "") return "empty node name";
    if (segment === "." || segment === "..") return "relative paths not allowed";
  }
  // Refused by ZooKeeper because they do not survive its string handling and display;
  // \ud800-\uf8ff covers surrogates, so characters outside the BMP are refused too.
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path)) return "invalid character";
  return null;
}

/** Throws BadArguments unless path is valid; a sequential path is checked with its suffix. */
export function validatePath(path: string, sequential = false): void {
  const why = pathProblem(sequential ? `${path}1` : path);
  if (why !== null) throw new ZkError("BadArguments", String(path), why);
}

/** The server's path for a client path under chroot ("" for none). */
export function prependChroot(chroot: string, path: string): string {
  if (chroot === "") return path;
  return path === "/" ? chroot : chroot + path;
}

/** The client's path for a server path: the chroot taken off (paths outside it stay whole). */
export function stripChroot(chroot: string, serverPath: string): string {
  if (chroot === "" || !serverPath.startsWith(chroot)) return serverPath;
  if (serverPath.length === chroot.length) return "/";
  return serverPath[chroot.length] === "/" ? serverPath.slice(chroot.length) : serverPath;
}

export interface ServerAddress {
  host: string;
  port: number;
}

export interface ConnectString {
  servers: ServerAddress[];
  /** "" for none; else a valid path without a trailing slash ("/kafka"). */
  chroot: string;
}

function bad(connectString: string, why: string): ZkError {
  return new ZkError("BadArguments", "", `connect string "${connectString}": ${why}`);
}

/**
 * Parses `h1:2181,h2:2182/chroot`. Hosts may be names, IPv4, or IPv6 in brackets; a missing port
 * is 2181; a chroot of "/" means none. Throws BadArguments naming what is wrong.
 */
export function parseConnectString(connectString: string): ConnectString {
  if (typeof connectString !== "string" || connectString.trim() === "") {
    throw bad(String(connectString), "no servers");
  }
  const text = connectString.trim();
  const slash = text.indexOf("/");
  const hostsPart = slash < 0 ? text : text.slice(0, slash);
  let chroot = slash < 0 ? "" : text.slice(slash);
  if (chroot === "/") chroot = "";
  if (chroot !== "") {
    const why = pathProblem(chroot);
    if (why !== null) throw bad(connectString, `chroot ${chroot}: ${why}`);
  }
  const entries = hostsPart.split(",").map((h) => h.trim());
  if (entries.length > zkConnectStringHostsMax) {
    throw bad(connectString, `more than ${zkConnectStringHostsMax} servers`);
  }
  const servers = entries.map((entry) => parseServer(connectString, entry));
  return { servers, chroot };
}

function parseServer(connectString: string, entry: string): ServerAddress {
  const m = /^(?:\[([0-9a-fA-F:.%\w]+)\]|([^:\[\]\s]+))(?::(\d{1,5}))?$/.exec(entry);
  if (m === null) throw bad(connectString, `"${entry}" is not host or host:port`);
  const host = m[1] ?? m[2];
  const port = m[3] === undefined ? defaultClientPort : Number(m[3]);
  if (port < 1 || port > 65535) throw bad(connectString, `port ${port} of "${entry}" is out of range`);
  return { host, port };
}

/** `host:port`, IPv6 in brackets: for messages. */
export function serverName(s: ServerAddress): string {
  return s.host.includes(":") ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
}
