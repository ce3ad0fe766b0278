// Log dir failure (Kafka's LogDirFailureChannel and KafkaStorageException): a file operation on a
// log that fails with an I/O error takes that log's whole dir offline, never the process.
//
// The platform throws on a failed file call (Bun's node:fs and Deno both throw an error carrying
// an errno-like `code`: EIO, ENOENT, ENOSPC, EROFS, ...). Those errors are caught at the few places
// that run log file operations (Log's public operations, the LogManager's start-up and tasks) and
// turned into a KafkaStorageError naming the dir; the LogManager is told once per dir and takes it
// offline. Anything else thrown there (an AssertionError, a TypeError) is a bug and propagates
// unchanged: a bug must not pass for a bad disk.
//
// Not every errno means a failed disk. Two kinds say nothing about the dir and pass by themselves
// (Kafka takes the dir offline for them too; strand does not, see README "Disk full and file
// descriptors"):
// - resource errors (EMFILE, ENFILE, ENOMEM, ENOBUFS): the process or the host is out of
//   descriptors or kernel memory. The operation is refused with a retriable KAFKA_STORAGE_ERROR,
//   logged at warn (rate-limited), and the same operation succeeds once descriptors are free.
// - no-space errors (ENOSPC, EDQUOT): the volume (or the user's quota) is full. Appends are
//   refused until the LogManager's free-space check sees room again; reads go on.

import { ErrorCode, KafkaError } from "../util/mod.ts";

/** A log operation failed because its log dir did (or already had): KAFKA_STORAGE_ERROR. */
export class KafkaStorageError extends KafkaError {
  override name = "KafkaStorageError";
  /** "failed": the dir is offline; "resource" / "no-space": a transient condition (see above). */
  constructor(readonly logDir: string, message: string, readonly kind: StorageErrorKind = "failed") {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
  }
}

export type StorageErrorKind = "failed" | "resource" | "no-space";

/** Out of descriptors or kernel memory: the process's or the host's limit, not the disk. */
const resourceErrorCodes = new Set(["EMFILE", "ENFILE", "ENOMEM", "ENOBUFS"]);
/** The volume or the quota is full: appends wait for space, nothing else is wrong with the dir. */
const noSpaceErrorCodes = new Set(["ENOSPC", "EDQUOT"]);

/** What an I/O error means for its dir: "failed" (offline), or one of the transient kinds. */
export function storageErrorKind(e: Error & { code: string }): StorageErrorKind {
  if (resourceErrorCodes.has(e.code)) return "resource";
  if (noSpaceErrorCodes.has(e.code)) return "no-space";
  return "failed";
}

/** An errno that says the process or the volume is out of something for now (see above), not that the disk failed. */
export function isTransientErrno(code: string): boolean {
  return resourceErrorCodes.has(code) || noSpaceErrorCodes.has(code);
}

/** ENOSPC or EDQUOT: the volume or the quota is full. */
export function isNoSpaceErrno(code: string): boolean {
  return noSpaceErrorCodes.has(code);
}

/** An I/O error that must not take its dir offline (resource exhaustion, a full volume). */
export function isTransientIoError(e: unknown): e is Error & { code: string } {
  return isIoError(e) && storageErrorKind(e) !== "failed";
}

/** Every log dir failed (at start-up or later): the broker cannot go on (Kafka stops too). */
export class LogDirsFailedError extends Error {
  override name = "LogDirsFailedError";
}

/** An error a failed file call raised (it carries an errno name such as "EIO"), not a bug. */
export function isIoError(e: unknown): e is Error & { code: string } {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === "string" && /^E[A-Z0-9]+$/.test(code);
}

/** The log dir holding a partition directory `<logDir>/<topic>-<partition>`. */
export function logDirOf(partitionDir: string): string {
  const i = partitionDir.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : partitionDir.slice(0, i);
}

/** Told, synchronously, when a file operation under a log dir failed (the LogManager is). */
export type LogDirFailureHandler = (logDir: string, err: Error) => void;

/** The KafkaStorageError for an I/O error of `operation` ("append of t-0") in logDir, by its kind. */
export function storageErrorFor(logDir: string, operation: string, e: Error & { code: string }): KafkaStorageError {
  const kind = storageErrorKind(e);
  if (kind === "resource") {
    return new KafkaStorageError(logDir, `${operation} refused: the broker is out of file descriptors or memory (${e.code}); retry later`, kind);
  }
  if (kind === "no-space") return new KafkaStorageError(logDir, `${operation} refused: log dir ${logDir} is full (${e.code})`, kind);
  return new KafkaStorageError(logDir, `${operation} failed in log dir ${logDir}: ${e.message}`);
}
