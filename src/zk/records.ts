// ZooKeeper's wire records (zookeeper.jute, 3.8) and the numbers around them: op codes, special
// xids, permissions, well-known ACLs, create flags, watcher event types and states. Names follow
// ZooKeeper's, so a reader can put this file next to zookeeper.jute and ZooDefs.java.
//
// Framing (not a jute record): every packet either way is an int32 byte length, then the bytes.
//   client → server: ConnectRequest (+ readOnly byte) once; then RequestHeader + request record
//   server → client: ConnectResponse (+ readOnly byte) once; then ReplyHeader + response record
// A reply with err != 0 carries no record (multi excepted: its results carry the errors).
// Multi request: (MultiHeader{type, done=false, err=-1} + op record)* then
//   MultiHeader{-1, true, -1}; the response: (MultiHeader{type, false, err} + result)* then the
//   same terminator, where an error result is MultiHeader{type=-1, err} + ErrorResponse.

import { Reader, Writer } from "../util/mod.ts";
import { type Fields, type JuteRecord, record, type RecordValue, vector } from "./jute.ts";

export const OpCode = {
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  checkWatches: 17,
  removeWatches: 18,
  createContainer: 19,
  deleteContainer: 20,
  createTTL: 21,
  multiRead: 22,
  auth: 100,
  setWatches: 101,
  sasl: 102,
  getEphemerals: 103,
  getAllChildrenNumber: 104,
  setWatches2: 105,
  addWatch: 106,
  whoAmI: 107,
  createSession: -10,
  closeSession: -11,
  error: -1,
} as const;

/** Xids the protocol reserves; requests use positive ones, in sending order. */
export const Xid = {
  notification: -1,
  ping: -2,
  auth: -4,
  setWatches: -8,
} as const;

export const Perms = {
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
} as const;

/** CreateMode's flags in CreateRequest. */
export const CreateFlags = {
  persistent: 0,
  ephemeral: 1,
  "persistent-sequential": 2,
  "ephemeral-sequential": 3,
  container: 4,
} as const;

export const EventType = {
  None: -1,
  NodeCreated: 1,
  NodeDeleted: 2,
  NodeDataChanged: 3,
  NodeChildrenChanged: 4,
  DataWatchRemoved: 5,
  ChildWatchRemoved: 6,
  PersistentWatchRemoved: 7,
} as const;

export const KeeperState = {
  Disconnected: 0,
  SyncConnected: 3,
  AuthFailed: 4,
  ConnectedReadOnly: 5,
  SaslAuthenticated: 6,
  Expired: -112,
  Closed: 7,
} as const;

/** The protocol version every 3.x client and server speaks in the handshake. */
export const protocolVersion = 0;
/** Session passwords are 16 bytes; a new session is asked for with 16 zero bytes. */
export const sessionPasswordBytes = 16;

// ---------------------------------------------------------------------------------------------
// org.apache.zookeeper.data

export const Id = record("Id", { scheme: "ustring", id: "ustring" });
export const ACL = record("ACL", { perms: "int", id: Id });
export const Stat = record("Stat", {
  czxid: "long",
  mzxid: "long",
  ctime: "long",
  mtime: "long",
  version: "int",
  cversion: "int",
  aversion: "int",
  ephemeralOwner: "long",
  dataLength: "int",
  numChildren: "int",
  pzxid: "long",
});

export type IdValue = RecordValue<typeof Id.fields>;
export type AclValue = RecordValue<typeof ACL.fields>;
export type StatRecord = RecordValue<typeof Stat.fields>;

/** ZooDefs.Ids: the ACLs everyone uses. */
export const Ids = {
  ANYONE_ID_UNSAFE: { scheme: "world", id: "anyone" } as IdValue,
  /** Matches every id the creating session has authenticated as. */
  AUTH_IDS: { scheme: "auth", id: "" } as IdValue,
  OPEN_ACL_UNSAFE: [{ perms: Perms.ALL, id: { scheme: "world", id: "anyone" } }] as AclValue[],
  CREATOR_ALL_ACL: [{ perms: Perms.ALL, id: { scheme: "auth", id: "" } }] as AclValue[],
  READ_ACL_UNSAFE: [{ perms: Perms.READ, id: { scheme: "world", id: "anyone" } }] as AclValue[],
} as const;

// ---------------------------------------------------------------------------------------------
// org.apache.zookeeper.proto

/** The readOnly flag follows as one extra byte (written apart from the record, as Java does). */
export const ConnectRequest = record("ConnectRequest", {
  protocolVersion: "int",
  lastZxidSeen: "long",
  timeOut: "int",
  sessionId: "long",
  passwd: "buffer",
});
export const ConnectResponse = record("ConnectResponse", {
  protocolVersion: "int",
  timeOut: "int",
  sessionId: "long",
  passwd: "buffer",
});
export const RequestHeader = record("RequestHeader", { xid: "int", type: "int" });
export const ReplyHeader = record("ReplyHeader", { xid: "int", zxid: "long", err: "int" });
export const MultiHeader = record("MultiHeader", { type: "int", done: "boolean", err: "int" });
export const AuthPacket = record("AuthPacket", { type: "int", scheme: "ustring", auth: "buffer" });
export const SetWatches = record("SetWatches", {
  relativeZxid: "long",
  dataWatches: vector("ustring"),
  existWatches: vector("ustring"),
  childWatches: vector("ustring"),
});
export const WatcherEvent = record("WatcherEvent", { type: "int", state: "int", path: "ustring" });

export const CreateRequest = record("CreateRequest", {
  path: "ustring",
  data: "buffer",
  acl: vector(ACL),
  flags: "int",
});
export const CreateResponse = record("CreateResponse", { path: "ustring" });
export const Create2Response = record("Create2Response", { path: "ustring", stat: Stat });
export const DeleteRequest = record("DeleteRequest", { path: "ustring", version: "int" });
/** ExistsRequest, GetDataRequest, GetChildrenRequest and GetChildren2Request share this shape. */
export const PathWatchRequest = record("PathWatchRequest", { path: "ustring", watch: "boolean" });
export const ExistsResponse = record("ExistsResponse", { stat: Stat });
export const GetDataResponse = record("GetDataResponse", { data: "buffer", stat: Stat });
export const SetDataRequest = record("SetDataRequest", { path: "ustring", data: "buffer", version: "int" });
export const SetDataResponse = record("SetDataResponse", { stat: Stat });
export const GetChildren2Response = record("GetChildren2Response", {
  children: vector("ustring"),
  stat: Stat,
});
export const CheckVersionRequest = record("CheckVersionRequest", { path: "ustring", version: "int" });
/** SyncRequest and GetACLRequest are a path alone; so are SyncResponse and CreateResponse. */
export const PathRequest = record("PathRequest", { path: "ustring" });
export const GetACLResponse = record("GetACLResponse", { acl: vector(ACL), stat: Stat });
export const ErrorResponse = record("ErrorResponse", { err: "int" });

// ---------------------------------------------------------------------------------------------
// Frames

/** A length-prefixed frame of RequestHeader + body (body may write nothing). */
export function requestFrame(xid: number, type: number, body: (w: Writer) => void): Uint8Array {
  const w = new Writer(128);
  const lengthAt = w.reserve(4);
  RequestHeader.encode(w, { xid, type });
  body(w);
  w.view.setInt32(lengthAt, w.pos - 4);
  return w.finish().slice();
}

/** The handshake's frame: ConnectRequest then the readOnly byte. */
export function connectFrame(req: RecordValue<typeof ConnectRequest.fields>, readOnly = false): Uint8Array {
  const w = new Writer(64);
  const lengthAt = w.reserve(4);
  ConnectRequest.encode(w, req);
  w.bool(readOnly);
  w.view.setInt32(lengthAt, w.pos - 4);
  return w.finish().slice();
}

export interface ConnectResult {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Uint8Array;
  readOnly: boolean;
}

/** Decodes the handshake reply (a frame's bytes without the length); null when malformed. */
export function decodeConnectResponse(body: Uint8Array): ConnectResult | null {
  const r = new Reader(body);
  const res = ConnectResponse.decode(r);
  // Servers before 3.4 stop here; later ones add the readOnly byte.
  const readOnly = r.ok && r.remaining > 0 ? r.int8() === 1 : false;
  if (!r.ok || r.remaining !== 0) return null;
  return { ...res, readOnly };
}

// ---------------------------------------------------------------------------------------------
// Multi

/** One op of a multi, as a MultiHeader type and its request record. */
export interface MultiOpRecord {
  type: number;
  write: (w: Writer) => void;
}

export function writeMulti(w: Writer, ops: readonly MultiOpRecord[]): void {
  for (const op of ops) {
    MultiHeader.encode(w, { type: op.type, done: false, err: -1 });
    op.write(w);
  }
  MultiHeader.encode(w, { type: -1, done: true, err: -1 });
}

export type MultiResultRecord =
  | { type: typeof OpCode.create; path: string }
  | { type: typeof OpCode.create2; path: string; stat: StatRecord }
  | { type: typeof OpCode.delete }
  | { type: typeof OpCode.setData; stat: StatRecord }
  | { type: typeof OpCode.check }
  | { type: typeof OpCode.error; err: number };

/** Reads a MultiResponse; marks r bad on an unknown result type or a missing terminator. */
export function readMultiResponse(r: Reader, resultsMax: number): MultiResultRecord[] {
  const out: MultiResultRecord[] = [];
  for (;;) {
    const h = MultiHeader.decode(r);
    if (!r.ok || h.done) return out;
    if (out.length >= resultsMax) {
      r.fail(`more than ${resultsMax} multi results`);
      return out;
    }
    const result = readMultiResult(r, h.type);
    if (result === null) return out;
    out.push(result);
  }
}

function readMultiResult(r: Reader, type: number): MultiResultRecord | null {
  switch (type) {
    case OpCode.create:
      return { type, path: CreateResponse.decode(r).path };
    case OpCode.create2:
      return { type, ...Create2Response.decode(r) };
    case OpCode.delete:
    case OpCode.check:
      return { type };
    case OpCode.setData:
      return { type, stat: SetDataResponse.decode(r).stat };
    case OpCode.error:
      return { type, err: ErrorResponse.decode(r).err };
    default:
      r.fail(`multi result of unknown type ${type}`);
      return null;
  }
}

/** Writes a MultiResponse (the server's side: for tests and fakes). */
export function writeMultiResponse(w: Writer, results: readonly MultiResultRecord[]): void {
  for (const res of results) {
    const err = res.type === OpCode.error ? res.err : 0;
    MultiHeader.encode(w, { type: res.type, done: false, err });
    if (res.type === OpCode.create) CreateResponse.encode(w, { path: res.path });
    else if (res.type === OpCode.create2) Create2Response.encode(w, { path: res.path, stat: res.stat });
    else if (res.type === OpCode.setData) SetDataResponse.encode(w, { stat: res.stat });
    else if (res.type === OpCode.error) ErrorResponse.encode(w, { err: res.err });
  }
  MultiHeader.encode(w, { type: -1, done: true, err: -1 });
}

/** Every record, by name: the codec tests walk it. */
export const records: Record<string, JuteRecord<Fields>> = {
  Id,
  ACL,
  Stat,
  ConnectRequest,
  ConnectResponse,
  RequestHeader,
  ReplyHeader,
  MultiHeader,
  AuthPacket,
  SetWatches,
  WatcherEvent,
  CreateRequest,
  CreateResponse,
  Create2Response,
  DeleteRequest,
  PathWatchRequest,
  ExistsResponse,
  GetDataResponse,
  SetDataRequest,
  SetDataResponse,
  GetChildren2Response,
  CheckVersionRequest,
  PathRequest,
  GetACLResponse,
  ErrorResponse,
};
