// The consumer protocol: what Kafka consumers (protocolType "consumer") put in JoinGroup's
// protocol metadata (a subscription) and SyncGroup's assignments. Each is an int16 version, then
// the struct, never flexible:
//
//   ConsumerProtocolSubscription v0  topics []string, userData bytes?
//                                v1  + ownedPartitions [topic string, partitions []int32]
//                                v2  + generationId int32      v3  + rackId string?
//   ConsumerProtocolAssignment   v0  assignedPartitions [topic string, partitions []int32],
//                                    userData bytes?            (v1-3: same layout)
//
// The broker treats these bytes as opaque (it only stores and forwards them); decoding is for
// display (DescribeGroups in the admin API) and tests. As Kafka's reader does, a version newer
// than this file knows is read as the newest known one, and bytes after the struct are ignored
// (newer versions only append fields). Other protocol types (Kafka Connect's "connect", ...)
// have their own formats: decode only when protocolType is "consumer". Decoders never throw.

import { Reader } from "../../util/mod.ts";
import type { Struct } from "../codec.ts";
import { message } from "../schema.ts";
import { decodeBody, encodeVersioned, noApiKey, readVersion } from "./versioned.ts";

export const ConsumerProtocolSubscriptionSchema = message(noApiKey, "ConsumerProtocolSubscription", "0-3", null, `
  topics                  []string
  userData                bytes   nullable  default=null
  ownedPartitions         []      v1+
    topic                 string
    partitions            []int32
  generationId            int32   v2+  default=-1
  rackId                  string  v3+  nullable  default=null
`);

export const ConsumerProtocolAssignmentSchema = message(noApiKey, "ConsumerProtocolAssignment", "0-3", null, `
  assignedPartitions      []
    topic                 string
    partitions            []int32
  userData                bytes   nullable  default=null
`);

export const consumerProtocolSchemas = [ConsumerProtocolSubscriptionSchema, ConsumerProtocolAssignmentSchema] as const;

/** The newest versions known here, and the ones the Java consumer of Kafka 3.8 writes. */
export const consumerProtocolVersionMax = 3;

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface ConsumerSubscription {
  topics: string[];
  userData: Uint8Array | null;
  ownedPartitions: TopicPartitions[];
  /** -1 when unknown (below v2). */
  generationId: number;
  rackId: string | null;
}

export interface ConsumerAssignment {
  assignedPartitions: TopicPartitions[];
  userData: Uint8Array | null;
}

export type ConsumerSubscriptionRecord = { kind: "subscription"; version: number } & ConsumerSubscription;
export type ConsumerAssignmentRecord = { kind: "assignment"; version: number } & ConsumerAssignment;
export interface InvalidConsumerProtocol {
  kind: "invalid";
  error: string;
}

export function encodeConsumerSubscription(
  value: Pick<ConsumerSubscription, "topics"> & Partial<ConsumerSubscription>,
  version = consumerProtocolVersionMax,
): Uint8Array {
  return encodeVersioned(ConsumerProtocolSubscriptionSchema, version, { ...value } as Struct);
}

export function encodeConsumerAssignment(
  value: Pick<ConsumerAssignment, "assignedPartitions"> & Partial<ConsumerAssignment>,
  version = consumerProtocolVersionMax,
): Uint8Array {
  return encodeVersioned(ConsumerProtocolAssignmentSchema, version, { ...value } as Struct);
}

/** The version the bytes say, and the one to read them as (a newer one is read as the newest known). */
function versions(r: Reader, what: string): { version: number; readAs: number } | InvalidConsumerProtocol {
  const version = readVersion(r);
  if (version === null) return { kind: "invalid", error: `${what} has no version` };
  if (version < 0) return { kind: "invalid", error: `${what} version ${version}` };
  return { version, readAs: Math.min(version, consumerProtocolVersionMax) };
}

export function decodeConsumerSubscription(bytes: Uint8Array): ConsumerSubscriptionRecord | InvalidConsumerProtocol {
  const r = new Reader(bytes);
  const v = versions(r, "subscription");
  if ("kind" in v) return v;
  const d = decodeBody(ConsumerProtocolSubscriptionSchema, v.readAs, r, true);
  if ("error" in d) return { kind: "invalid", error: d.error };
  return { kind: "subscription", version: v.version, ...(d.value as unknown as ConsumerSubscription) };
}

export function decodeConsumerAssignment(bytes: Uint8Array): ConsumerAssignmentRecord | InvalidConsumerProtocol {
  const r = new Reader(bytes);
  const v = versions(r, "assignment");
  if ("kind" in v) return v;
  const d = decodeBody(ConsumerProtocolAssignmentSchema, v.readAs, r, true);
  if ("error" in d) return { kind: "invalid", error: d.error };
  return { kind: "assignment", version: v.version, ...(d.value as unknown as ConsumerAssignment) };
}
