// A test-only Platform wrapper that simulates a failed disk: once `fail(dir)` is called, every file
// operation on a path under dir throws an I/O error (code EIO, as node:fs and Deno raise them),
// including operations through handles opened before the failure — what a dead disk does. Closing
// a handle still works, so a test leaks no descriptors. Running as root, chmod cannot do this.
// `inject(dir, code, ops)` raises another errno (EMFILE on opens, ENOSPC on writes, ...) for the
// named operations only, until the returned function lifts it; with `partialWrite`, a failing
// write first writes half its bytes, as a write(2) cut short by a full disk does. `setUsableBytes`
// makes statfs report a volume with that much usable space.
import type { FileHandle, FileSystem, FileSystemSpace, OpenMode, Platform } from "../../src/platform/types.ts";
import type { Logger } from "../../src/util/logger.ts";

/** Operation names as check() sees them. */
export type FileOp = "open" | "read" | "write" | "writeAtomic" | "fstat" | "ftruncate" | "fsync" | "rename" | "unlink" | "mkdir" | "scandir" | "stat" | "statfs";

export interface FaultyPlatform extends Platform {
  /** Makes every file operation under dir fail from now on. */
  fail(dir: string): void;
  /**
   * Makes the operations `ops` (all when omitted) under dir throw an error with errno `code`
   * until the returned function is called. `partialWrite`: a failing append writes half first.
   */
  inject(dir: string, code: string, options?: { ops?: FileOp[]; partialWrite?: boolean }): () => void;
  /** statfs under dir reports this many usable bytes (null: the real figure again). */
  setUsableBytes(dir: string, bytes: number | null): void;
  /** File operations that failed so far (to check the broker tried, and stopped trying). */
  readonly failures: string[];
}

const messages: Record<string, string> = {
  EIO: "i/o error",
  EMFILE: "too many open files",
  ENFILE: "file table overflow",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
};

function ioError(code: string, op: string, path: string): Error {
  const e = new Error(`${code}: ${messages[code] ?? "error"}, ${op} '${path}'`) as Error & { code: string };
  e.code = code;
  return e;
}

interface Fault {
  dir: string;
  code: string;
  ops: Set<string> | null;
  partialWrite: boolean;
}

export function faultyPlatform(inner: Platform): FaultyPlatform {
  const faults: Fault[] = [];
  const failures: string[] = [];
  const usable = new Map<string, number>();
  const under = (path: string, d: string) => path === d || path.startsWith(d + "/");
  const faultFor = (op: FileOp, path: string) => faults.find((f) => under(path, f.dir) && (f.ops === null || f.ops.has(op)));
  const check = (op: FileOp, path: string) => {
    const f = faultFor(op, path);
    if (f === undefined) return;
    failures.push(`${op} ${path}`);
    throw ioError(f.code, op, path);
  };
  /** A write that fails part way when its fault says so (half the bytes land first). */
  const checkWrite = (path: string, data: Uint8Array, write: (part: Uint8Array) => void) => {
    const f = faultFor("write", path);
    if (f === undefined) return;
    failures.push(`write ${path}`);
    if (f.partialWrite && data.length > 1) write(data.subarray(0, data.length >> 1));
    throw ioError(f.code, "write", path);
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
      checkWrite(h.path, data, (part) => h.append(part));
      h.append(data);
    },
    writeAt(data, position) {
      checkWrite(h.path, data, (part) => h.writeAt(part, position));
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
    async openAsync(path: string, mode: OpenMode) {
      check("open", path);
      return wrapHandle(await f.openAsync(path, mode));
    },
    readFile(path) {
      check("read", path);
      return f.readFile(path);
    },
    writeFileAtomic(path, data) {
      check("writeAtomic", path);
      check("write", path);
      f.writeFileAtomic(path, data);
    },
    rename(from, to) {
      check("rename", from);
      check("rename", to);
      f.rename(from, to);
    },
    async renameAsync(from, to) {
      check("rename", from);
      check("rename", to);
      await f.renameAsync(from, to);
    },
    remove(path) {
      check("unlink", path);
      f.remove(path);
    },
    async removeAsync(path) {
      check("unlink", path);
      await f.removeAsync(path);
    },
    mkdirp(path) {
      check("mkdir", path);
      f.mkdirp(path);
    },
    async mkdirpAsync(path) {
      check("mkdir", path);
      await f.mkdirpAsync(path);
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
      const real = f.statfs(path);
      const d = [...usable.keys()].find((dir) => under(path, dir));
      if (real === null || d === undefined) return real;
      return { totalBytes: real.totalBytes, usableBytes: usable.get(d) as number } satisfies FileSystemSpace;
    },
  };
  return {
    name: inner.name,
    version: inner.version,
    fs,
    net: inner.net,
    http: inner.http,
    clock: inner.clock,
    process: inner.process,
    randomBytes: (out) => inner.randomBytes(out),
    resolveHost: (name) => inner.resolveHost(name),
    fail(dir: string) {
      faults.push({ dir, code: "EIO", ops: null, partialWrite: false });
    },
    inject(dir, code, options = {}) {
      const fault: Fault = { dir, code, ops: options.ops ? new Set(options.ops) : null, partialWrite: options.partialWrite ?? false };
      faults.push(fault);
      return () => {
        const i = faults.indexOf(fault);
        if (i >= 0) faults.splice(i, 1);
      };
    },
    setUsableBytes(dir, bytes) {
      if (bytes === null) usable.delete(dir);
      else usable.set(dir, bytes);
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
