// A test-only Platform wrapper that simulates a failed disk: once `fail(dir)` is called, every file
// operation on a path under dir throws an I/O error (code EIO, as node:fs and Deno raise them),
// including operations through handles opened before the failure — what a dead disk does. Closing
// a handle still works, so a test leaks no descriptors. Running as root, chmod cannot do this.
import type { FileHandle, FileSystem, OpenMode, Platform } from "../../src/platform/types.ts";
import type { Logger } from "../../src/util/logger.ts";

export interface FaultyPlatform extends Platform {
  /** Makes every file operation under dir fail from now on. */
  fail(dir: string): void;
  /** File operations that failed so far (to check the broker tried, and stopped trying). */
  readonly failures: string[];
}

function ioError(op: string, path: string): Error {
  const e = new Error(`EIO: i/o error, ${op} '${path}'`) as Error & { code: string };
  e.code = "EIO";
  return e;
}

export function faultyPlatform(inner: Platform): FaultyPlatform {
  const failed: string[] = [];
  const failures: string[] = [];
  const isFailed = (path: string) => failed.some((d) => path === d || path.startsWith(d + "/"));
  const check = (op: string, path: string) => {
    if (!isFailed(path)) return;
    failures.push(`${op} ${path}`);
    throw ioError(op, path);
  };

  const wrapHandle = (h: FileHandle): FileHandle => ({
    get path() {
      return h.path;
    },
    readAt(buf, position) {
      check("read", h.path);
      return h.readAt(buf, position);
    },
    append(data) {
      check("write", h.path);
      h.append(data);
    },
    writeAt(data, position) {
      check("write", h.path);
      h.writeAt(data, position);
    },
    size() {
      check("fstat", h.path);
      return h.size();
    },
    truncate(size) {
      check("ftruncate", h.path);
      h.truncate(size);
    },
    sync() {
      check("fsync", h.path);
      h.sync();
    },
    async syncAsync() {
      check("fsync", h.path);
      await (h.syncAsync?.() ?? h.sync());
    },
    close() {
      h.close();
    },
  });

  const f = inner.fs;
  const fs: FileSystem = {
    open(path: string, mode: OpenMode) {
      check("open", path);
      return wrapHandle(f.open(path, mode));
    },
    readFile(path) {
      check("read", path);
      return f.readFile(path);
    },
    writeFileAtomic(path, data) {
      check("write", path);
      f.writeFileAtomic(path, data);
    },
    rename(from, to) {
      check("rename", from);
      check("rename", to);
      f.rename(from, to);
    },
    remove(path) {
      check("unlink", path);
      f.remove(path);
    },
    mkdirp(path) {
      check("mkdir", path);
      f.mkdirp(path);
    },
    readdir(path) {
      check("scandir", path);
      return f.readdir(path);
    },
    stat(path) {
      check("stat", path);
      return f.stat(path);
    },
    syncDir(path) {
      check("fsync", path);
      f.syncDir(path);
    },
    statfs(path) {
      check("statfs", path);
      return f.statfs(path);
    },
  };
  return {
    name: inner.name,
    version: inner.version,
    fs,
    net: inner.net,
    clock: inner.clock,
    process: inner.process,
    randomBytes: (out) => inner.randomBytes(out),
    fail(dir: string) {
      failed.push(dir);
    },
    failures,
  };
}

/** A logger keeping every line (level, message, fields), for tests that check what was logged. */
export function recordingLogger(): Logger & { lines: { level: string; msg: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const make = (bound: Record<string, unknown>): Logger => ({
    debug: (fields, msg) => void lines.push({ level: "debug", msg, fields: { ...bound, ...fields } }),
    info: (fields, msg) => void lines.push({ level: "info", msg, fields: { ...bound, ...fields } }),
    warn: (fields, msg) => void lines.push({ level: "warn", msg, fields: { ...bound, ...fields } }),
    error: (fields, msg) => void lines.push({ level: "error", msg, fields: { ...bound, ...fields } }),
    child: (fields) => make({ ...bound, ...fields }),
  });
  return Object.assign(make({}), { lines });
}
