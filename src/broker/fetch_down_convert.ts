// Fetch v0-3 answers: the stored batches v2 of each partition down-converted to the message
// format the request version reads (magic 0 for v0-1, 1 for v2-3), as Kafka's KafkaApis does with
// LazyDownConversionRecords. A topic with message.downconversion.enable=false answers a consumer
// UNSUPPORTED_VERSION for the partition instead (a follower is converted regardless, as in Kafka).
//
// Size: Fetch v3 answers at most the stored bytes read for the partition (which the response's
// and partition's max bytes already bounded), except that the first converted message or wrapper
// is always whole so the consumer can make progress (Kafka's sizeInBytes = max(stored, first
// converted batch)). Fetch v0-2 has a hard partition_max_bytes: what passes it is cut off, and a
// first message larger than it arrives partial, which those consumers read as "too large". A
// whole answer holds at most downConvertedResponseBytesMax converted bytes (limits.ts): the
// stored bytes read are bounded, but what they decompress to is not by them.
import { downConvert } from "../protocol/mod.ts";
import type { FetchPartitionResult } from "../replication/mod.ts";
import { downConvertedResponseBytesMax, ErrorCode } from "../util/mod.ts";
import type { BrokerServices } from "./services.ts";

/** Highest Fetch version that reads legacy message sets. */
export const FETCH_LEGACY_FORMAT_TO = 3;

/** Whether the topic allows down-conversion (message.downconversion.enable, else the broker's log.message.downconversion.enable). */
export function downConversionEnabled(s: BrokerServices, topic: string): boolean {
  const v = s.metadata.topicOverrides(topic)["message.downconversion.enable"];
  return v === undefined ? s.config.logMessageDownconversionEnable : v.trim().toLowerCase() !== "false";
}

/** First Fetch version whose consumers read zstd (KIP-110). */
export const FETCH_ZSTD_FROM = 10;

/**
 * Kafka's check before any conversion (KafkaApis.maybeConvertFetchedData): a Fetch older than v10
 * of a topic whose compression.type is zstd answers UNSUPPORTED_COMPRESSION_TYPE, since every batch
 * stored there is zstd, which that client cannot read.
 */
export function refuseZstdTopics(s: BrokerServices, results: FetchPartitionResult[]): FetchPartitionResult[] {
  return results.map((r) => {
    const type = s.metadata.topicOverrides(r.topic)["compression.type"]?.trim() ?? s.config.compression.type;
    if (type !== "zstd" || r.errorCode !== ErrorCode.NONE) return r;
    return { ...r, errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: null };
  });
}

/** One partition of the read, as the handler asked ReplicaManager for it. */
interface Asked {
  fetchOffset: number;
  maxBytes: number;
}

/**
 * The read's results with their records down-converted for a Fetch of `version` (0-3), in the
 * same order; a partition whose conversion cannot be done answers its error code. The whole
 * answer's converted bytes stop at downConvertedResponseBytesMax (plus one first message or
 * wrapper): past it, partitions answer no records and the consumer fetches them again.
 */
export function downConvertFetched(
  s: BrokerServices,
  version: number,
  fromFollower: boolean,
  results: FetchPartitionResult[],
  asked: Asked[],
  responseBytesMax = downConvertedResponseBytesMax,
): FetchPartitionResult[] {
  let left = responseBytesMax;
  return results.map((r, i) => {
    if (!fromFollower && !downConversionEnabled(s, r.topic)) {
      return { ...r, errorCode: ErrorCode.UNSUPPORTED_VERSION, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: null };
    }
    if (r.records === null || r.records.length === 0) return r;
    if (left <= 0) return { ...r, records: new Uint8Array(0) };
    const hard = version <= 2;
    const converted = downConvert(r.records, {
      toMagic: version <= 1 ? 0 : 1,
      fetchOffset: asked[i].fetchOffset,
      budgetBytes: Math.min(left, hard ? asked[i].maxBytes : r.records.length),
      minOneUnit: !hard,
    });
    if (converted.errorCode !== ErrorCode.NONE) return { ...r, errorCode: converted.errorCode, records: null };
    left -= converted.records.length;
    return { ...r, records: converted.records };
  });
}
