// Log dir failure (Kafka's LogDirFailureChannel and KafkaStorageException): a file operation on a
// log that fails with an I/O error takes that log's whole dir offline, never the process.
//
// The platform throws on a failed file call (Bun's node:fs and Deno both throw an error carrying
// an errno-like `code`: EIO, ENOENT, ENOSPC, EROFS, ...). Those errors are caught at the few places
// that run log file operations (Log's public operations, the LogManager's start-up and tasks) and
// turned into a KafkaStorageError naming the dir; the LogManager is told once per dir and takes it
// offline. Anything else thrown there (an AssertionError, a TypeError) is a bug and propagates
// unchanged: a bug must not pass for a bad disk.

import { ErrorCode, KafkaError } from "../util/mod.ts";

/** A log operation failed because its log dir did (or already had): KAFKA_STORAGE_ERROR. */
export class KafkaStorageError extends KafkaError {
  override name = "KafkaStorageError";
  constructor(readonly logDir: string, message: string) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
  }
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
