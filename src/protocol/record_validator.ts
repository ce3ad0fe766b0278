// The produce path's check of a record set, as Kafka's LogValidator (with DefaultRecordBatch and
// DefaultRecord's readers) does it, before anything is appended:
//
// - each batch: whole, magic 2, CRC32C, size within max.message.bytes, a known codec, count ==
//   lastOffsetDelta + 1 > 0; no control bit (clients may not write markers); a producer id
//   carries a sequence >= 0, a transactional batch a producer id. An idempotent or transactional
//   batch's sequence and epoch are checked by the log's producer state (log/producer_state.ts).
// - every record of every batch, walked as bytes (decompressed first into a buffer of at most
//   decompressedBytesMax, so a bomb stops there): its length within the bytes left, its varints
//   no longer than 5 (10) bytes, offsetDelta equal to its index (strand stores batches as sent,
//   so the deltas must already be what Kafka's rewrite would give), key, value and headers
//   filling the length exactly, a header count within the bytes left, exactly `count` records
//   and no trailing bytes. Any of these failing is INVALID_RECORD (Kafka's InvalidRecordException
//   from its record iterator); bytes that do not decompress are CORRUPT_MESSAGE.
// - per record, as LogValidator.validateRecord: a key on compacted topics (INVALID_RECORD), and
//   the timestamp (INVALID_TIMESTAMP): with CreateTime within [now - before.max.ms,
//   now + after.max.ms] unless it is -1 (NO_TIMESTAMP), and never the LogAppendTime bit from a
//   client on a LogAppendTime topic. These become Produce v8+'s recordErrors (batchIndex is the
//   record's index in its batch), all of one batch reported at once.
//
// Then the header is made truthful, as Kafka's setMaxTimestamp does: maxTimestamp is the largest
// record timestamp (CreateTime) or the broker's clock (LogAppendTime, with attribute bit 3 set),
// and the CRC is recomputed when a header field changed. Fields outside the CRC (base offset,
// leader epoch) are patched later by assignOffsets.
//
// Timestamps are int64: base + delta is computed in doubles only while both are safe integers,
// and in bigint otherwise (2^63-1 is a legal timestamp, accepted under the default bounds as
// Kafka accepts it). No object is made per record: a position walks the bytes, and the varint
// readers hand back where they ended through module state.
//
// Where strand is stricter or looser than Kafka, on purpose: a CreateTime base + delta outside
// int64 is INVALID_TIMESTAMP (Java would wrap it); a key or header value length below -1 is
// INVALID_RECORD (Kafka reads it as null, and strand's own readers would refuse it later); a set
// of several batches is still taken, each walked (Kafka refuses more than one in Produce v3+);
// a batch's baseOffset need not be 0 (it is overwritten on append either way).

import { crc32c, decompressedBytesMax, ErrorCode, produceRecordErrorsMax, recordBatchHeaderBytes } from "../util/mod.ts";
import { decompress } from "./compression.ts";
import { knownBatchCrc } from "./produce_crc_ahead.ts";
import { BatchField, batchLogOverhead, batchSizeAt, Compression, view } from "./record_batch.ts";

/** Attribute bits of a record batch v2 (bits 0-2 are the codec). */
export const BatchAttribute = { logAppendTime: 0x08, transactional: 0x10, control: 0x20, deleteHorizon: 0x40 } as const;

/** Kafka's Long.MAX_VALUE as a topic config value arrives here (config numbers stop at 2^53 - 1). */
export const timestampBoundNone = Number.MAX_SAFE_INTEGER;

export interface RecordRules {
  /** `<topic>-<partition>`, as Kafka's messages name a partition. */
  topicPartition: string;
  /** cleanup.policy contains compact: every record needs a key. */
  compacted: boolean;
  /** message.timestamp.type=LogAppendTime: the broker's clock stamps every batch. */
  logAppendTime: boolean;
  /** Effective message.timestamp.before.max.ms (>= timestampBoundNone: no bound, Kafka's Long.MAX_VALUE). */
  timestampBeforeMaxMs: number;
  /** Effective message.timestamp.after.max.ms (likewise). */
  timestampAfterMaxMs: number;
  /** The broker's wall clock for this request. */
  nowMs: number;
  /** Most bytes a compressed batch's records may decompress to. */
  decompressedBytesMax: number;
}

export interface RecordError {
  batchIndex: number;
  batchIndexErrorMessage: string;
}

export interface BatchSetSummary {
  errorCode: number;
  message: string;
  batchCount: number;
  /** Sum over batches of lastOffsetDelta + 1: how many offsets the set takes. */
  offsetCount: number;
  recordCount: number;
  /** Largest batch maxTimestamp after validation (the stamped time with LogAppendTime). */
  maxTimestamp: bigint;
  /** The time stamped with LogAppendTime, else -1 (what the Produce response answers). */
  logAppendTimeMs: number;
  /** Per-record problems of the first batch that had any (INVALID_RECORD, INVALID_TIMESTAMP). */
  recordErrors: RecordError[];
}

const noRecordErrors: RecordError[] = [];

/** Rules for a client produce when the topic config is not known: Kafka's defaults. */
export const defaultRecordRules: RecordRules = {
  topicPartition: "",
  compacted: false,
  logAppendTime: false,
  timestampBeforeMaxMs: timestampBoundNone,
  timestampAfterMaxMs: timestampBoundNone,
  nowMs: 0,
  decompressedBytesMax,
};

function fail(errorCode: number, message: string, recordErrors = noRecordErrors): BatchSetSummary {
  return { errorCode, message, batchCount: 0, offsetCount: 0, recordCount: 0, maxTimestamp: -1n, logAppendTimeMs: -1, recordErrors };
}

const int64Max = (1n << 63n) - 1n;
const int64Min = -(1n << 63n);
const safeMax = Number.MAX_SAFE_INTEGER;
/** A timestamp delta past 7 varlong bytes (2^48 ms either way) is decoded in bigint. */
const fastVarlongShiftMax = 42;

/**
 * Bounds of a CreateTime timestamp as Kafka computes them: reject when now - ts > before or
 * ts - now > after, in Java's wrapping long arithmetic (which the bigint path reproduces for
 * timestamps far from now). For safe-integer timestamps no wrap can happen, so the exact bounds
 * are compared in doubles (±Infinity when past the safe range).
 */
class TimestampBounds {
  readonly lowerNum: number;
  readonly upperNum: number;
  readonly nowBig: bigint;
  readonly before: bigint;
  readonly after: bigint;

  constructor(nowMs: number, beforeMaxMs: number, afterMaxMs: number) {
    this.nowBig = BigInt(Math.floor(nowMs));
    this.before = beforeMaxMs >= timestampBoundNone ? int64Max : BigInt(Math.floor(beforeMaxMs));
    this.after = afterMaxMs >= timestampBoundNone ? int64Max : BigInt(Math.floor(afterMaxMs));
    const lower = this.nowBig - this.before;
    const upper = this.nowBig + this.after;
    this.lowerNum = lower < BigInt(-safeMax) ? -Infinity : Number(lower);
    this.upperNum = upper > BigInt(safeMax) ? Infinity : Number(upper);
  }

  outOfRangeBig(ts: bigint): boolean {
    const diff = BigInt.asIntN(64, this.nowBig - ts);
    return diff > this.before || BigInt.asIntN(64, -diff) > this.after;
  }

  describe(ts: bigint | number, index: number): string {
    return `Timestamp ${ts} of message with offset ${index} is out of range. The timestamp should be within ` +
      `[${BigInt.asIntN(64, this.nowBig - this.before)}, ${BigInt.asIntN(64, this.nowBig + this.after)}]`;
  }
}

// The varint readers return the value and leave where it ended in `next` (-1 when the varint is
// longer than Kafka allows or runs past its limit). Module state, not a result object, so the
// record walk allocates nothing; it is only read right after the call that set it.
let next = 0;
/** Set by readVarlong when the value was decoded as a bigint (into `nextBig`); the number is then 0. */
let nextIsBig = false;
let nextBig = 0n;

/** Kafka's ByteUtils.readVarint: zigzag int32 in at most 5 bytes. */
function readVarint(buf: Uint8Array, p: number, limit: number): number {
  let v = 0;
  let shift = 0;
  let b: number;
  do {
    if (p >= limit || shift > 28) {
      next = -1;
      return 0;
    }
    b = buf[p++];
    v |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  next = p;
  return (v >>> 1) ^ -(v & 1);
}

/** Kafka's ByteUtils.readVarlong: zigzag int64 in at most 10 bytes; a double while it is small. */
function readVarlong(buf: Uint8Array, p: number, limit: number): number {
  const start = p;
  let u = 0;
  let scale = 1;
  let shift = 0;
  let b: number;
  nextIsBig = false;
  do {
    if (p >= limit) {
      next = -1;
      return 0;
    }
    if (shift > fastVarlongShiftMax) return readVarlongBig(buf, start, limit);
    b = buf[p++];
    u += (b & 0x7f) * scale;
    scale *= 128;
    shift += 7;
  } while (b & 0x80);
  next = p;
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

function readVarlongBig(buf: Uint8Array, p: number, limit: number): number {
  let u = 0n;
  let shift = 0n;
  let b: number;
  do {
    if (p >= limit || shift > 63n) {
      next = -1;
      return 0;
    }
    b = buf[p++];
    u |= BigInt(b & 0x7f) << shift;
    shift += 7n;
  } while (b & 0x80);
  u = BigInt.asUintN(64, u);
  next = p;
  nextIsBig = true;
  nextBig = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  return 0;
}

/** Skips a nullable bytes field (length varint, -1 null) in buf[p, limit); the end, or -1. */
function skipBytes(buf: Uint8Array, p: number, limit: number): number {
  const n = readVarint(buf, p, limit);
  if (next < 0 || n < -1 || n > limit - next) return -1;
  return n > 0 ? next + n : next;
}

/** What walking one batch's records found; reused across batches. */
class BatchWalk {
  /** A framing problem (INVALID_RECORD for the whole request), or "". */
  framing = "";
  recordErrors: RecordError[] = noRecordErrors;
  /** Records with errors (recordErrors keeps the first produceRecordErrorsMax of them). */
  errorCount = 0;
  timestampErrors = 0;
  /** Largest record timestamp: in maxNum while every one is a safe integer. */
  maxNum = -1;
  maxBig: bigint | null = null;

  constructor(readonly rules: RecordRules, readonly bounds: TimestampBounds) {}

  private recordError(index: number, message: string, timestamp: boolean): void {
    if (this.recordErrors === noRecordErrors) this.recordErrors = [];
    if (timestamp) this.timestampErrors++;
    this.errorCount++;
    if (this.recordErrors.length < produceRecordErrorsMax) this.recordErrors.push({ batchIndex: index, batchIndexErrorMessage: message });
  }

  /**
   * Walks `count` records in buf[start, end). `latTimestamp` is the batch's maxTimestamp when it
   * carries the LogAppendTime bit (every record's timestamp is then that), else null.
   */
  walk(buf: Uint8Array, start: number, end: number, count: number, baseTimestamp: bigint, latTimestamp: bigint | null): void {
    const rules = this.rules;
    const bounds = this.bounds;
    const lowerNum = bounds.lowerNum;
    const upperNum = bounds.upperNum;
    const compacted = rules.compacted;
    const checkRange = !rules.logAppendTime;
    const baseNum = Number(baseTimestamp);
    // The fast path: a safe base, no LogAppendTime bit; anything else goes to timestamp().
    const fast = Number.isSafeInteger(baseNum) && latTimestamp === null;
    let maxNum = -1;
    this.framing = "";
    this.maxBig = null;
    let p = start;
    for (let i = 0; i < count; i++) {
      if (p >= end) {
        this.framing = `batch declares ${count} records but holds ${i}`;
        return;
      }
      const length = readVarint(buf, p, end);
      if (next < 0 || length <= 0 || length > end - next) {
        this.framing = `Invalid record size: record ${i} declares ${next < 0 ? "a malformed" : length} length with ${end - p} bytes left`;
        return;
      }
      const recordEnd = next + length;
      p = next + 1; // attributes: unused in v2, as Kafka leaves them
      const delta = readVarlong(buf, p, recordEnd);
      const deltaIsBig = nextIsBig;
      if (next >= 0) p = next;
      const offsetDelta = next < 0 ? 0 : readVarint(buf, p, recordEnd);
      const keyLength = next < 0 ? 0 : readVarint(buf, p = next, recordEnd);
      if (next < 0 || keyLength < -1 || keyLength > recordEnd - next) {
        this.framing = `Found invalid record structure in record ${i}`;
        return;
      }
      p = skipBytes(buf, keyLength > 0 ? next + keyLength : next, recordEnd);
      const headerCount = p < 0 ? 0 : readVarint(buf, p, recordEnd);
      if (p < 0 || next < 0 || headerCount < 0 || headerCount > recordEnd - next) {
        this.framing = p < 0 ? `Found invalid record structure in record ${i}` : `Found invalid number of record headers ${next < 0 ? "(malformed)" : headerCount} in record ${i}`;
        return;
      }
      p = next;
      for (let h = 0; h < headerCount; h++) {
        const headerKeyLength = readVarint(buf, p, recordEnd);
        if (next < 0 || headerKeyLength < 0 || headerKeyLength > recordEnd - next) {
          this.framing = `Invalid header key size in record ${i}`;
          return;
        }
        p = skipBytes(buf, next + headerKeyLength, recordEnd);
        if (p < 0) {
          this.framing = `Invalid header value size in record ${i}`;
          return;
        }
      }
      if (p !== recordEnd) {
        this.framing = `Invalid record size: expected to read ${length} bytes in record ${i}, but instead read ${p - (recordEnd - length)}`;
        return;
      }
      if (offsetDelta !== i) {
        this.recordError(i, `offset delta ${offsetDelta} of record ${i} in topic partition ${rules.topicPartition}; the deltas must be 0, 1, 2 …`, false);
        continue;
      }
      if (compacted && keyLength === -1) {
        this.recordError(i, `Compacted topic cannot accept message without key in topic partition ${rules.topicPartition}`, false);
        continue;
      }
      if (fast && !deltaIsBig) {
        const ts = baseNum + delta;
        if (ts >= -safeMax && ts <= safeMax) {
          if (checkRange && ts !== -1 && (ts < lowerNum || ts > upperNum)) this.recordError(i, bounds.describe(ts, i), true);
          else if (ts > maxNum) maxNum = ts;
          continue;
        }
      }
      maxNum = this.timestamp(i, maxNum, baseTimestamp, delta, deltaIsBig ? nextBig : null, latTimestamp);
    }
    this.maxNum = maxNum;
    if (p !== end) this.framing = `Incorrect declared batch size, ${end - p} bytes of records still remaining after ${count} records`;
  }

  /**
   * A record timestamp off the fast path (LogAppendTime bit, or past 2^53): checked as
   * LogValidator.validateTimestamp does; returns the new maxNum (maxBig is kept here).
   */
  private timestamp(i: number, maxNum: number, base: bigint, delta: number, deltaBig: bigint | null, latTimestamp: bigint | null): number {
    const ts = latTimestamp ?? base + (deltaBig ?? BigInt(delta));
    const small = ts >= -safeMax && ts <= safeMax;
    if (!this.rules.logAppendTime && ts !== -1n) {
      if (ts > int64Max || ts < int64Min) {
        this.recordError(i, `Timestamp ${ts} of message with offset ${i} is outside int64 (base ${base})`, true);
        return maxNum;
      }
      const out = small ? Number(ts) < this.bounds.lowerNum || Number(ts) > this.bounds.upperNum : this.bounds.outOfRangeBig(ts);
      if (out) {
        this.recordError(i, this.bounds.describe(ts, i), true);
        return maxNum;
      }
    } else if (latTimestamp !== null) {
      this.recordError(i, `Invalid timestamp type in message ${i}. Producer should not set timestamp type to LogAppendTime.`, true);
      return maxNum;
    }
    if (small) return Math.max(maxNum, Number(ts));
    if (this.maxBig === null || ts > this.maxBig) this.maxBig = ts;
    return maxNum;
  }

  /** The batch's largest record timestamp (-1 when none is above it, as Kafka's NO_TIMESTAMP). */
  maxTimestamp(): bigint {
    const num = BigInt(this.maxNum);
    return this.maxBig !== null && this.maxBig > num ? this.maxBig : num;
  }
}

/** The partition-level answer Kafka gives for a batch's record errors (processRecordErrors). */
function recordErrorsFailure(walk: BatchWalk, batchIndex: number, several: boolean): BatchSetSummary {
  const errors = walk.recordErrors;
  const where = several ? ` (batch ${batchIndex} of the set)` : "";
  if (walk.timestampErrors > 0) {
    return fail(ErrorCode.INVALID_TIMESTAMP, `One or more records have been rejected due to invalid timestamp${where}`, errors);
  }
  const shown = errors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.batchIndexErrorMessage}')`);
  return fail(
    ErrorCode.INVALID_RECORD,
    `One or more records have been rejected due to ${walk.errorCount} record errors in total, and only showing the first three errors at most: [${shown.join(", ")}]${where}`,
    errors,
  );
}

/** Checks of the producer fields (Kafka's validateBatch); sequences are the producer state's. */
function producerFieldsError(dv: DataView, pos: number, attributes: number, tp: string): BatchSetSummary | null {
  if (attributes & BatchAttribute.control) {
    return fail(ErrorCode.INVALID_RECORD, `Clients are not allowed to write control records in topic partition ${tp}`);
  }
  const producerId = dv.getBigInt64(pos + BatchField.producerId);
  const baseSequence = dv.getInt32(pos + BatchField.baseSequence);
  if (producerId >= 0n && baseSequence < 0) {
    return fail(ErrorCode.INVALID_RECORD, `Invalid sequence number ${baseSequence} in record batch with producerId ${producerId} in topic partition ${tp}`);
  }
  if (attributes & BatchAttribute.transactional) {
    // Whether the transaction added this partition is the coordinator's (KIP-890, the Produce path).
    if (producerId < 0n) return fail(ErrorCode.INVALID_RECORD, `Transactional record batch without a producer id in topic partition ${tp}`);
  }
  return null;
}

/**
 * Checks a produced record set before it is appended (see the header) and makes each batch's
 * maxTimestamp and timestamp type truthful, in place. Returns NONE with a summary, or the Kafka
 * error code the partition should answer with (and, for per-record problems, recordErrors).
 */
export function validateBatches(records: Uint8Array, maxBatchBytes: number, rules: RecordRules = defaultRecordRules): BatchSetSummary {
  const dv = view(records);
  let pos = 0;
  let batchCount = 0;
  let offsetCount = 0;
  let recordCount = 0;
  let maxTimestamp = -1n;
  if (records.length === 0) return fail(ErrorCode.CORRUPT_MESSAGE, "empty record set");
  const walk = new BatchWalk(rules, new TimestampBounds(rules.nowMs, rules.timestampBeforeMaxMs, rules.timestampAfterMaxMs));
  const nowBig = BigInt(Math.floor(rules.nowMs));
  while (pos < records.length) {
    const left = records.length - pos;
    if (left < recordBatchHeaderBytes) {
      return fail(ErrorCode.CORRUPT_MESSAGE, `${left} trailing bytes are not a whole batch header`);
    }
    const magic = dv.getInt8(pos + BatchField.magic);
    if (magic !== 2) {
      const code = magic >= 0 && magic < 2 ? ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT : ErrorCode.CORRUPT_MESSAGE;
      return fail(code, `record batch magic ${magic}; strand stores magic 2 only`);
    }
    const size = batchSizeAt(dv, pos);
    if (size < recordBatchHeaderBytes || size > left) {
      return fail(ErrorCode.CORRUPT_MESSAGE, `batch length ${size - batchLogOverhead} does not fit the ${left} bytes left`);
    }
    if (size > maxBatchBytes) {
      return fail(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${size} bytes is larger than the limit ${maxBatchBytes}`);
    }
    const crc = dv.getUint32(pos + BatchField.crc);
    // Usually computed while the request arrived (produce_crc_ahead.ts), over these very bytes.
    const computed = knownBatchCrc(records, pos + BatchField.attributes, pos + size) ?? crc32c(records, pos + BatchField.attributes, pos + size);
    if (computed !== crc) {
      return fail(ErrorCode.CORRUPT_MESSAGE, "record batch CRC32C mismatch");
    }
    const attributes = dv.getInt16(pos + BatchField.attributes);
    const codec = attributes & 7;
    if (codec > Compression.zstd) {
      return fail(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `compression codec ${codec}`);
    }
    const count = dv.getInt32(pos + BatchField.recordCount);
    const lastOffsetDelta = dv.getInt32(pos + BatchField.lastOffsetDelta);
    if (count <= 0 || lastOffsetDelta < 0 || lastOffsetDelta + 1 !== count) {
      return fail(ErrorCode.INVALID_RECORD, `record count ${count} with last offset delta ${lastOffsetDelta}`);
    }
    const producerError = producerFieldsError(dv, pos, attributes, rules.topicPartition);
    if (producerError !== null) return producerError;

    // Records: walked in place when uncompressed, else in a bounded decompressed copy.
    let body = records;
    let start = pos + recordBatchHeaderBytes;
    let end = pos + size;
    if (codec !== Compression.none) {
      const plain = decompress(codec, records.subarray(start, end), { maxBytes: rules.decompressedBytesMax });
      if (!plain.ok) return fail(plain.errorCode, `batch ${batchCount}: ${plain.message}`);
      body = plain.bytes;
      start = 0;
      end = body.length;
    }
    const headerMax = dv.getBigInt64(pos + BatchField.maxTimestamp);
    const lat = (attributes & BatchAttribute.logAppendTime) !== 0;
    walk.walk(body, start, end, count, dv.getBigInt64(pos + BatchField.baseTimestamp), lat ? headerMax : null);
    if (walk.framing !== "") return fail(ErrorCode.INVALID_RECORD, `${walk.framing} in topic partition ${rules.topicPartition}`);
    if (walk.recordErrors.length > 0) return recordErrorsFailure(walk, batchCount, batchCount > 0 || pos + size < records.length);

    // Kafka's setMaxTimestamp: the header says what the records hold (or the append time).
    const batchMax = rules.logAppendTime ? nowBig : walk.maxTimestamp();
    const wantLat = rules.logAppendTime;
    if (batchMax !== headerMax || wantLat !== lat) {
      dv.setInt16(pos + BatchField.attributes, wantLat ? attributes | BatchAttribute.logAppendTime : attributes & ~BatchAttribute.logAppendTime);
      dv.setBigInt64(pos + BatchField.maxTimestamp, batchMax);
      dv.setUint32(pos + BatchField.crc, crc32c(records, pos + BatchField.attributes, pos + size));
    }
    if (batchMax > maxTimestamp) maxTimestamp = batchMax;
    batchCount++;
    offsetCount += lastOffsetDelta + 1;
    recordCount += count;
    pos += size;
  }
  return {
    errorCode: ErrorCode.NONE,
    message: "",
    batchCount,
    offsetCount,
    recordCount,
    maxTimestamp,
    logAppendTimeMs: rules.logAppendTime ? rules.nowMs : -1,
    recordErrors: noRecordErrors,
  };
}
