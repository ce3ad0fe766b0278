// A registry write that could not be stored on disk (the embedded registry's journal at ENOSPC,
// EDQUOT, EMFILE, or after a failed fsync), as the admin paths answer it: KAFKA_STORAGE_ERROR
// with a message naming the registry file and the errno, never a closed connection. Nothing of the
// change was applied (the store undoes a transaction its journal refused), so the same request
// succeeds once the disk has room. Kafka has no code for "ZooKeeper could not write"; it answers
// UNKNOWN_SERVER_ERROR there, which tells a client nothing. KAFKA_STORAGE_ERROR is retriable.

import { isTransientErrno } from "../log/mod.ts";
import { registryStorageErrno } from "../registry/mod.ts";
import { ErrorCode, type Logger, storageErrorLogIntervalMs } from "../util/mod.ts";

export interface RegistryWriteFailure {
  errorCode: number;
  errorMessage: string;
  /** A full disk or no descriptor: it passes by itself (logged at warn); else the disk failed (error). */
  transient: boolean;
}

/** What to answer for e when it is a registry storage failure, else null. `what` names the change. */
export function registryWriteFailure(e: unknown, what: string): RegistryWriteFailure | null {
  const errno = registryStorageErrno(e);
  if (errno === null) return null;
  const transient = isTransientErrno(errno);
  const why = (e as Error).message;
  const hint = transient ? "; try again once the registry's disk has room" : "";
  return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, errorMessage: `${what}: the registry could not store it (${why})${hint}`, transient };
}

/** Per logger: when the last line was said, and how many were not said since. */
const said = new WeakMap<Logger, { lastMs: number; notSaid: number }>();

/**
 * Logs a registry storage failure: warn when it passes by itself, error when the disk failed.
 * Given the time (monotonic ms), at most one line per logger every storageErrorLogIntervalMs,
 * with the count of those not said: paths that clients retry in a loop (a producer's metadata
 * auto-creating a topic, 0.8-style offset commits) must not flood the log that has to say so.
 */
export function logRegistryWriteFailure(logger: Logger, f: RegistryWriteFailure, fields: Record<string, unknown> = {}, monotonicMs?: number): void {
  const last = said.get(logger);
  if (monotonicMs !== undefined && last !== undefined && monotonicMs - last.lastMs < storageErrorLogIntervalMs) {
    last.notSaid++;
    return;
  }
  logger[f.transient ? "warn" : "error"]({ ...fields, reason: f.errorMessage, notSaidSinceLast: last?.notSaid ?? 0 }, "registry write refused");
  said.set(logger, { lastMs: monotonicMs ?? -Infinity, notSaid: 0 });
}
