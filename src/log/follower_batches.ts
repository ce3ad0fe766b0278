// The check of a record set a follower fetched from its leader, before Log.appendAsFollower
// stores it (Kafka's analyzeAndValidateRecords with the offsets taken as given). Headers only:
// records stay bytes.
//
// Rules, batch by batch:
// - A trailing batch cut short (fewer bytes left than its length says, or than a length field) is
//   not part of the set: a fetch answer may end mid-batch, and the next fetch starts there.
// - A whole batch must be magic 2, at least a batch header long, with a CRC32C that matches and a
//   last offset delta >= 0; anything else is CORRUPT_MESSAGE (Kafka's CorruptRecordException).
// - Offsets are the leader's and must increase: each batch's base offset above the previous
//   batch's last offset (gaps are fine: a compacted leader log has them). Otherwise
//   UNKNOWN_SERVER_ERROR, the code Kafka's OffsetsOutOfOrderException reaches a client with.
// Where the set must start (at or after the log end offset) is the Log's check.

import { BatchField, batchCrcValid, batchLogOverhead, view } from "../protocol/mod.ts";
import { ErrorCode, KafkaError, recordBatchHeaderBytes, segmentRelativeOffsetMax } from "../util/mod.ts";

/** Offsets stay safe integers, with room for any last offset delta. */
const baseOffsetMax = BigInt(Number.MAX_SAFE_INTEGER - segmentRelativeOffsetMax);

/** One batch of a fetched set: where it lies in the set, its offsets and its leader epoch. */
export interface FetchedBatch {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  /** partitionLeaderEpoch (-1: none). */
  leaderEpoch: number;
}

/**
 * The whole batches at the start of `records`, checked by the rules above; `what` names the
 * partition in error messages. Throws KafkaError (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR).
 */
export function checkFetchedBatches(records: Uint8Array, what: string): FetchedBatch[] {
  const dv = view(records);
  const batches: FetchedBatch[] = [];
  let prevLastOffset = -1;
  let pos = 0;
  const corrupt = (why: string) => new KafkaError(ErrorCode.CORRUPT_MESSAGE, `batch at byte ${pos} of a fetched set for ${what} ${why}`);
  while (pos + batchLogOverhead <= records.length) {
    const size = batchLogOverhead + dv.getInt32(pos + BatchField.batchLength);
    if (size < recordBatchHeaderBytes) throw corrupt(`has length ${size - batchLogOverhead}, below a batch header`);
    if (pos + size > records.length) break; // the fetch ended mid-batch
    const magic = dv.getInt8(pos + BatchField.magic);
    if (magic !== 2) throw corrupt(`has magic ${magic}; strand stores magic 2 only`);
    if (!batchCrcValid(records, pos, size)) throw corrupt("fails its CRC32C");
    const base = dv.getBigInt64(pos + BatchField.baseOffset);
    const lastOffsetDelta = dv.getInt32(pos + BatchField.lastOffsetDelta);
    if (base < 0n || base > baseOffsetMax || lastOffsetDelta < 0) {
      throw corrupt(`has base offset ${base} and last offset delta ${lastOffsetDelta}`);
    }
    const baseOffset = Number(base);
    if (baseOffset <= prevLastOffset) {
      throw new KafkaError(
        ErrorCode.UNKNOWN_SERVER_ERROR,
        `out of order offsets in a fetched set for ${what}: batch at ${baseOffset} follows one ending at ${prevLastOffset}`,
      );
    }
    prevLastOffset = baseOffset + lastOffsetDelta;
    const leaderEpoch = dv.getInt32(pos + BatchField.partitionLeaderEpoch);
    batches.push({ position: pos, size, baseOffset, lastOffset: prevLastOffset, leaderEpoch });
    pos += size;
  }
  return batches;
}
