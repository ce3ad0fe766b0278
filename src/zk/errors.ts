// ZooKeeper's error codes (KeeperException.Code) under their names, and ZkError, the one error
// type the client rejects with. The names are ZooKeeper's, in the spelling the registry's
// RegistryErrorCode uses, so a registry backend can pass most of them through unchanged.

export const ZkErrorNumber = {
  SystemError: -1,
  RuntimeInconsistency: -2,
  DataInconsistency: -3,
  ConnectionLoss: -4,
  MarshallingError: -5,
  Unimplemented: -6,
  OperationTimeout: -7,
  BadArguments: -8,
  UnknownSession: -12,
  NewConfigNoQuorum: -13,
  ReconfigInProgress: -14,
  APIError: -100,
  NoNode: -101,
  NoAuth: -102,
  BadVersion: -103,
  NoChildrenForEphemerals: -108,
  NodeExists: -110,
  NotEmpty: -111,
  SessionExpired: -112,
  InvalidCallback: -113,
  InvalidACL: -114,
  AuthFailed: -115,
  SessionMoved: -118,
  NotReadOnly: -119,
  EphemeralOnLocalSession: -120,
  NoWatcher: -121,
  /** Client-side: no reply within the request timeout (ZooKeeper's REQUESTTIMEOUT). */
  RequestTimeout: -122,
  ReconfigDisabled: -123,
  SessionClosedRequireSaslAuth: -124,
  QuotaExceeded: -125,
  Throttled: -127,
} as const;

export type ZkErrorCode = keyof typeof ZkErrorNumber;

const names = new Map<number, ZkErrorCode>(
  Object.entries(ZkErrorNumber).map(([name, n]) => [n, name as ZkErrorCode]),
);

/** The name of a numeric code; an unknown number becomes SystemError (the detail keeps it). */
export function zkErrorCode(n: number): ZkErrorCode {
  return names.get(n) ?? "SystemError";
}

export class ZkError extends Error {
  override name = "ZkError";
  /**
   * @param path the path the failed call was given (chroot-free), "" when none applies
   * @param detail more about the cause; for a failed multi, which op failed
   */
  constructor(readonly code: ZkErrorCode, readonly path: string, readonly detail = "") {
    super(`${code}: ${path}${detail ? ` (${detail})` : ""}`);
  }

  /** ZooKeeper's number for the code. */
  get errno(): number {
    return ZkErrorNumber[this.code];
  }
}

/** A ZkError for a numeric code from the wire; an unknown number is named in the detail. */
export function zkError(n: number, path: string, detail = ""): ZkError {
  const code = zkErrorCode(n);
  const known = names.has(n);
  return new ZkError(code, path, known ? detail : `unknown error code ${n}${detail ? `; ${detail}` : ""}`);
}

export function isZkError(e: unknown, code?: ZkErrorCode): e is ZkError {
  return e instanceof ZkError && (code === undefined || e.code === code);
}
