// The records of __consumer_offsets, as Kafka writes them. Key and value each open with an int16
// version (not an API version); the key's version says what the record is:
//
//   key v0, v1   OffsetCommitKey      group string, topic string, partition int32 (same layout)
//   key v2       GroupMetadataKey     group string
//   key v3+      records of Kafka's newer group coordinator (KIP-848); Kafka 3.8 skips them on
//                load, and so does decodeOffsetsKey's caller ("unknown")
//
//   OffsetCommitValue  v0  offset int64, metadata string, commitTimestamp int64
//                      v1  + expireTimestamp int64 (last)    v2  as v0
//                      v3  + leaderEpoch int32 (after offset) v4  flexible (compact, tagged)
//   GroupMetadataValue v0  protocolType string, generation int32, protocol string?, leader string?,
//                          members [memberId, clientId, clientHost, sessionTimeout int32,
//                          subscription bytes, assignment bytes]
//                      v1  + member rebalanceTimeout (before sessionTimeout)
//                      v2  + currentStateTimestamp int64 (before members)
//                      v3  + member groupInstanceId string? (after memberId)   v4  flexible
//
// A record with a null value (a tombstone) deletes its key's offset or group; callers handle
// that before decoding a value. Kafka 3.8 writes key v1 / v2, OffsetCommitValue v1 when an
// expire timestamp is set and v3 otherwise, and GroupMetadataValue v3; the encoders here choose
// the same. Strings are non-compact int16-length strings below v4, so a group id, topic or
// metadata string longer than 32767 UTF-8 bytes cannot be written: callers bound them first.
// Decoders never throw: malformed bytes give { kind: "invalid", error }.

import { Reader } from "../../util/mod.ts";
import type { Struct } from "../codec.ts";
import { message } from "../schema.ts";
import { decodeBody, encodeVersioned, noApiKey, readVersion } from "./versioned.ts";

export const OffsetCommitKeySchema = message(noApiKey, "OffsetCommitKey", "0-1", null, `
  group                   string
  topic                   string
  partition               int32
`);

export const OffsetCommitValueSchema = message(noApiKey, "OffsetCommitValue", "0-4", "4+", `
  offset                  int64
  leaderEpoch             int32   v3+  default=-1
  metadata                string
  commitTimestamp         int64
  expireTimestamp         int64   v1   default=-1
`);

export const GroupMetadataKeySchema = message(noApiKey, "GroupMetadataKey", "2", null, `
  group                   string
`);

export const GroupMetadataValueSchema = message(noApiKey, "GroupMetadataValue", "0-4", "4+", `
  protocolType            string
  generation              int32
  protocol                string  nullable      // the chosen assignor; null while Empty
  leader                  string  nullable
  currentStateTimestamp   int64   v2+  default=-1
  members                 []
    memberId              string
    groupInstanceId       string  v3+  nullable  default=null
    clientId              string
    clientHost            string
    rebalanceTimeout      int32   v1+  default=-1
    sessionTimeout        int32
    subscription          bytes
    assignment            bytes
`);

/** Every record format of __consumer_offsets, for tests and tools. */
export const offsetsRecordSchemas = [
  OffsetCommitKeySchema,
  OffsetCommitValueSchema,
  GroupMetadataKeySchema,
  GroupMetadataValueSchema,
] as const;

/** The key versions Kafka 3.8 writes. */
export const offsetCommitKeyVersion = 1;
export const groupMetadataKeyVersion = 2;
/** The value versions Kafka 3.8 writes (OffsetCommitValue v1 only when expireTimestamp is set). */
export const offsetCommitValueVersion = 3;
export const offsetCommitValueVersionWithExpiry = 1;
export const groupMetadataValueVersion = 3;

export interface OffsetCommitKey {
  group: string;
  topic: string;
  partition: number;
}

export interface GroupMetadataKey {
  group: string;
}

export interface OffsetCommitValue {
  offset: bigint;
  /** -1 when unknown (always, below v3). */
  leaderEpoch: number;
  /** The client's metadata; Kafka stores a null from OffsetCommit as "". */
  metadata: string;
  commitTimestamp: bigint;
  /** -1 when not set; written in v1 only. */
  expireTimestamp: bigint;
}

export interface GroupMemberMetadata {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeout: number;
  sessionTimeout: number;
  /** The member's JoinGroup protocol metadata for the chosen protocol (opaque). */
  subscription: Uint8Array;
  /** The member's SyncGroup assignment (opaque). */
  assignment: Uint8Array;
}

export interface GroupMetadataValue {
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** -1 when unknown (below v2). */
  currentStateTimestamp: bigint;
  members: GroupMemberMetadata[];
}

export interface InvalidRecord {
  kind: "invalid";
  error: string;
}

export type OffsetsKey =
  | ({ kind: "offsetCommit"; version: number } & OffsetCommitKey)
  | ({ kind: "groupMetadata"; version: number } & GroupMetadataKey)
  /** A key version this broker does not know (a newer coordinator's record): skip it. */
  | { kind: "unknown"; version: number }
  | InvalidRecord;

export type OffsetCommitValueRecord = { kind: "offsetCommit"; version: number } & OffsetCommitValue;
export type GroupMetadataValueRecord = { kind: "groupMetadata"; version: number } & GroupMetadataValue;
export type OffsetsValue = OffsetCommitValueRecord | GroupMetadataValueRecord | InvalidRecord;

// ---- keys -------------------------------------------------------------------------------------

export function encodeOffsetCommitKey(key: OffsetCommitKey, version = offsetCommitKeyVersion): Uint8Array {
  if (key.group.length <= fastStringMax && key.topic.length <= fastStringMax) {
    scratchView.setInt16(0, version);
    const end = putString(putString(2, key.group), key.topic);
    scratchView.setInt32(end, key.partition);
    return scratch.slice(0, end + 4);
  }
  return encodeVersioned(OffsetCommitKeySchema, version, { ...key });
}

// A commit writes one key and one value per partition (a consumer of 1,000 partitions commits
// 2,000 of them a time): the layouts Kafka 3.8 writes (key v0-1, value v1 and v3, never flexible)
// are put straight into one scratch buffer rather than walked through their schemas. The tests
// check them against the schema's encoding byte for byte.
const scratch = new Uint8Array(1024);
const scratchView = new DataView(scratch.buffer);
const encoder = new TextEncoder();
/** UTF-16 units of a string put here: at most 3 UTF-8 bytes each, so two fit the scratch. */
const fastStringMax = 150;

/** An int16-length string at pos; returns the position after it. */
function putString(pos: number, s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) {
      n = encoder.encodeInto(s, scratch.subarray(pos + 2)).written;
      break;
    }
    scratch[pos + 2 + i] = c;
  }
  scratchView.setInt16(pos, n);
  return pos + 2 + n;
}

export function encodeGroupMetadataKey(key: GroupMetadataKey, version = groupMetadataKeyVersion): Uint8Array {
  return encodeVersioned(GroupMetadataKeySchema, version, { ...key });
}

/** What a __consumer_offsets key is, by its version; never throws. */
export function decodeOffsetsKey(bytes: Uint8Array): OffsetsKey {
  const r = new Reader(bytes);
  const version = readVersion(r);
  if (version === null) return { kind: "invalid", error: `key of ${bytes.length} bytes has no version` };
  if (version < 0) return { kind: "invalid", error: `key version ${version}` };
  if (version === groupMetadataKeyVersion) {
    const d = decodeBody(GroupMetadataKeySchema, version, r, false);
    return "error" in d ? { kind: "invalid", error: d.error } : { kind: "groupMetadata", version, group: d.value.group as string };
  }
  if (version <= 1) {
    const d = decodeBody(OffsetCommitKeySchema, version, r, false);
    if ("error" in d) return { kind: "invalid", error: d.error };
    const v = d.value;
    return { kind: "offsetCommit", version, group: v.group as string, topic: v.topic as string, partition: v.partition as number };
  }
  return { kind: "unknown", version };
}

// ---- values -----------------------------------------------------------------------------------

/** The version Kafka 3.8 writes: v1 to carry an expire timestamp, else v3 (with the leader epoch). */
export function chooseOffsetCommitValueVersion(value: { expireTimestamp?: bigint }): number {
  const expire = value.expireTimestamp;
  return expire !== undefined && expire !== -1n ? offsetCommitValueVersionWithExpiry : offsetCommitValueVersion;
}

export type OffsetCommitValueInput =
  & Pick<OffsetCommitValue, "offset" | "metadata" | "commitTimestamp">
  & Partial<Pick<OffsetCommitValue, "leaderEpoch" | "expireTimestamp">>;

export function encodeOffsetCommitValue(value: OffsetCommitValueInput, version = chooseOffsetCommitValueVersion(value)): Uint8Array {
  if ((version === 1 || version === 3) && value.metadata.length <= fastStringMax) {
    scratchView.setInt16(0, version);
    scratchView.setBigInt64(2, value.offset);
    let pos = 10;
    if (version === 3) {
      scratchView.setInt32(pos, value.leaderEpoch ?? -1);
      pos += 4;
    }
    pos = putString(pos, value.metadata);
    scratchView.setBigInt64(pos, value.commitTimestamp);
    pos += 8;
    if (version === 1) {
      scratchView.setBigInt64(pos, value.expireTimestamp ?? -1n);
      pos += 8;
    }
    return scratch.slice(0, pos);
  }
  return encodeVersioned(OffsetCommitValueSchema, version, { ...value } as Struct);
}

export type GroupMetadataValueInput =
  & Omit<GroupMetadataValue, "currentStateTimestamp" | "members">
  & { currentStateTimestamp?: bigint; members: Array<Omit<GroupMemberMetadata, "rebalanceTimeout" | "groupInstanceId"> & Partial<Pick<GroupMemberMetadata, "rebalanceTimeout" | "groupInstanceId">>> };

export function encodeGroupMetadataValue(value: GroupMetadataValueInput, version = groupMetadataValueVersion): Uint8Array {
  return encodeVersioned(GroupMetadataValueSchema, version, { ...value } as Struct);
}

function invalidValue(bytes: Uint8Array, what: string): InvalidRecord {
  return { kind: "invalid", error: `${what} value of ${bytes.length} bytes has no version` };
}

export function decodeOffsetCommitValue(bytes: Uint8Array): OffsetCommitValueRecord | InvalidRecord {
  const r = new Reader(bytes);
  const version = readVersion(r);
  if (version === null) return invalidValue(bytes, "offset commit");
  const d = decodeBody(OffsetCommitValueSchema, version, r, false);
  if ("error" in d) return { kind: "invalid", error: d.error };
  return { kind: "offsetCommit", version, ...(d.value as unknown as OffsetCommitValue) };
}

export function decodeGroupMetadataValue(bytes: Uint8Array): GroupMetadataValueRecord | InvalidRecord {
  const r = new Reader(bytes);
  const version = readVersion(r);
  if (version === null) return invalidValue(bytes, "group metadata");
  const d = decodeBody(GroupMetadataValueSchema, version, r, false);
  if ("error" in d) return { kind: "invalid", error: d.error };
  const v = d.value as unknown as GroupMetadataValue;
  // The decoder's bytes are views of the input; a group outlives the buffer it was loaded from.
  const members = v.members.map((m) => ({ ...m, subscription: m.subscription.slice(), assignment: m.assignment.slice() }));
  return { kind: "groupMetadata", version, ...v, members };
}

/** Decodes a (non-null) value by the kind of its decoded key; never throws. */
export function decodeOffsetsValue(keyKind: "offsetCommit" | "groupMetadata", bytes: Uint8Array): OffsetsValue {
  return keyKind === "offsetCommit" ? decodeOffsetCommitValue(bytes) : decodeGroupMetadataValue(bytes);
}
