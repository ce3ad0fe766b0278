// ListOffsets (2), v0-8. v0 (deprecated, pre-0.10 clients) answers up to maxNumOffsets offsets
// from the segments' base offsets and file times (log/legacy_offsets.ts), a consumer's capped at
// the high watermark, as Kafka's handleListOffsetRequestV0. v1+: -1 latest (the high watermark;
// for isolation_level 1, read_committed, v2+, the last stable offset; for a follower (replica_id >= 0) the log end offset, as Kafka answers
// replica fetchers resolving an out-of-range fetch), -2 earliest (log start offset), -3 the record with the largest timestamp
// (v7, KIP-734), -4 earliest local (v8, KIP-405: with no tiered storage, the log start offset;
// like Kafka, taken in any version), or a timestamp: the first record whose timestamp is at or
// after it, found through the segments' time indexes (Log.offsetForTimestamp); -1 when none is
// below the high watermark (the last stable offset for read_committed: Kafka's lastFetchableOffset).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { clampedToHighWatermark, legacyOffsetsBefore, timestampFromBigInt } from "../../log/mod.ts";
import { ListOffsetsApi } from "../../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;
const EARLIEST_LOCAL = -4;

interface ListPartition {
  partitionIndex: number;
  currentLeaderEpoch: number;
  timestamp: bigint;
  maxNumOffsets: number;
}

/** v0: the partition's old-style offsets, or an error code (Kafka's legacyFetchOffsetsForTimestamp). */
function legacyLookup(s: BrokerServices, topic: string, p: ListPartition, replicaId: number) {
  const out = { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets: [] as bigint[] };
  const part = s.replicaManager.getPartition(topic, p.partitionIndex);
  if (s.replicaManager.isOffline(topic, p.partitionIndex)) return { ...out, errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
  if (part === undefined) return { ...out, errorCode: s.metadata.notHostedError(topic, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) };
  if (!part.isLeader) return { ...out, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  // Kafka fails a negative count building its array (UNKNOWN_SERVER_ERROR).
  if (p.maxNumOffsets < 0) return { ...out, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
  let offsets;
  try {
    offsets = legacyOffsetsBefore(part.log, timestampFromBigInt(p.timestamp), p.maxNumOffsets, s.clock.nowMs());
  } catch (e) {
    if (!(e instanceof KafkaError)) throw e;
    return { ...out, errorCode: e.code };
  }
  if (replicaId < 0) offsets = clampedToHighWatermark(offsets, part.highWatermark);
  return { ...out, oldStyleOffsets: offsets.map(BigInt) };
}

function lookup(s: BrokerServices, topic: string, p: ListPartition, replicaId: number, readCommitted: boolean) {
  const out = { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
  const part = s.replicaManager.getPartition(topic, p.partitionIndex);
  // A partition whose log dir failed answers KAFKA_STORAGE_ERROR first, as Kafka's does.
  if (s.replicaManager.isOffline(topic, p.partitionIndex)) return { ...out, errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
  if (part === undefined) return { ...out, errorCode: s.metadata.notHostedError(topic, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) };
  if (!part.isLeader) return { ...out, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== part.state.leaderEpoch) {
    const code = p.currentLeaderEpoch < part.state.leaderEpoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
    return { ...out, errorCode: code };
  }
  // Exact over int64 (a target near 2^63-1 must not round): a Timestamp (log/timestamp.ts).
  const ts = timestampFromBigInt(p.timestamp);
  out.leaderEpoch = part.state.leaderEpoch;
  const lastFetchable = readCommitted ? part.log.lastStableOffset : part.highWatermark;
  if (ts === LATEST) return { ...out, offset: BigInt(replicaId >= 0 ? part.log.logEndOffset : lastFetchable) };
  if (ts === EARLIEST || ts === EARLIEST_LOCAL) return { ...out, offset: BigInt(part.log.logStartOffset) };
  let found;
  try {
    found = ts === MAX_TIMESTAMP ? part.log.maxTimestampOffset() : part.log.offsetForTimestamp(ts);
  } catch (e) {
    // The lookup reads the segments: a failed dir makes it KAFKA_STORAGE_ERROR (see Log).
    if (!(e instanceof KafkaError)) throw e;
    return { ...out, errorCode: e.code, leaderEpoch: -1 };
  }
  if (found === null || found.offset >= lastFetchable) return { ...out, leaderEpoch: -1 };
  return { ...out, offset: BigInt(found.offset), timestamp: BigInt(found.timestamp) };
}

export const listOffsetsHandler: ApiHandler<BrokerServices> = {
  api: ListOffsetsApi,
  handle(s, ctx, req) {
    const topics = req.topics as { name: string; partitions: ListPartition[] }[];
    const describable = authorizedNames(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topics.map((t) => t.name));
    const denied = (p: ListPartition) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, timestamp: -1n, offset: -1n, leaderEpoch: -1, oldStyleOffsets: [] });
    // A replica id that is not a live broker is treated as a consumer's.
    const claimed = req.replicaId as number;
    const replicaId = claimed >= 0 && claimed !== s.brokerId && s.metadata.getBroker(claimed) !== undefined ? claimed : -1;
    const readCommitted = ctx.version >= 2 && (req.isolationLevel as number) === 1;
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) =>
          !describable.has(t.name) ? denied(p) : ctx.version === 0 ? legacyLookup(s, t.name, p, replicaId) : lookup(s, t.name, p, replicaId, readCommitted)
        ),
      })),
    };
  },
};
