// zk: a ZooKeeper client over the platform's sockets: jute codec, sessions, watches, multi,
// chroot, digest auth and ACLs. Self-contained: it imports only the platform contract
// (platform/types via platform/mod.ts) and util, so it could be published as its own package.
//
// Wire format (ZooKeeper 3.x client protocol, what ZooKeeper 3.8 speaks):
// - TCP; every packet either way is an int32 big-endian length, then that many bytes.
// - Handshake: the client sends ConnectRequest {int protocolVersion=0, long lastZxidSeen,
//   int timeOut (ms asked), long sessionId (0: new), buffer passwd (16 bytes)} + bool readOnly;
//   the server answers ConnectResponse {int protocolVersion, int timeOut (granted; <= 0: the
//   session is expired), long sessionId, buffer passwd} + bool readOnly.
// - Then the client sends RequestHeader {int xid, int type (op code)} + the request record; the
//   server answers ReplyHeader {int xid, long zxid, int err} + the response record (none when
//   err != 0). Requests get xids 1, 2, 3, … in sending order and are answered in that order.
//   Reserved xids: -1 watch notification (WatcherEvent {type, state, path}), -2 ping, -4 auth
//   (AuthPacket {int type=0, ustring scheme, buffer auth}), -8 SetWatches.
// - Jute encodings: int/long big-endian, boolean one byte, ustring and buffer an int32 length
//   (-1: null) then bytes, vector an int32 count then elements; see jute.ts and records.ts.
//
// Invariants (details in client.ts):
// - Replies match requests by order and xid; a mismatch or a malformed frame drops the
//   connection (in-flight requests fail with ConnectionLoss) and the client reconnects.
// - A reconnect resumes the session (id + password) while it lives, re-sends auth and watches.
//   An expired session is replaced by a new one; onNewSession listeners are told.
// - Watches are one-shot and fire once per event per watcher, in the server's order.
// - Every failure is a ZkError whose `code` names ZooKeeper's error (NoNode, NodeExists,
//   BadVersion, NotEmpty, SessionExpired, ConnectionLoss, NoAuth, …); multi failures are
//   ZkMultiError, naming the first failing op. Paths in errors and results are chroot-free.
// - Paths follow ZooKeeper's rules (BadArguments otherwise), checked before anything is sent;
//   requests larger than ZooKeeper's jute.maxbuffer are refused before sending.
export {
  type ZkCreateMode,
  ZkMultiError,
  type ZkOp,
  type ZkOpResult,
  type ZkPlatform,
  type ZkSessionEvent,
  type ZkStat,
  ZooKeeperClient,
  type ZooKeeperClientOptions,
} from "./client.ts";
export { digestAcl, digestId, splitCredential } from "./digest.ts";
export { isZkError, ZkError, type ZkErrorCode, zkErrorCode, ZkErrorNumber } from "./errors.ts";
export { FrameError, FrameReader } from "./frames.ts";
export * as jute from "./jute.ts";
export {
  type ConnectString,
  defaultClientPort,
  parseConnectString,
  pathProblem,
  prependChroot,
  type ServerAddress,
  serverName,
  stripChroot,
  validatePath,
} from "./paths.ts";
export * as records from "./records.ts";
export { type AclValue, CreateFlags, type IdValue, Ids, OpCode, Perms, Xid } from "./records.ts";
export type { ZkWatcher, ZkWatchEvent, ZkWatchEventType } from "./watches.ts";
