// The produce path's check of a record set, as Kafka's LogValidator (with DefaultRecordBatch and
// DefaultRecord's readers) does it, before anything is appended:
//
// - each batch: whole, magic 2, CRC32C, size within max.message.bytes, a known codec, count ==
//   lastOffsetDelta + 1 > 0; no control bit (clients may not write markers); no transactional bit
//   or producer id (strand keeps no producer state: InitProducerId is not offered, so no client
//   can hold an id from it; Kafka answers INVALID_TXN_STATE for a transaction the coordinator
//   never saw, and a producer id strand cannot deduplicate is UNKNOWN_PRODUCER_ID).
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
// Kafka accepts it). No object is made per record: a cursor walks the bytes.

import { crc32c, decompressedBytesMax, ErrorCode, produceRecordErrorsMax, recordBatchHeaderBytes } from "../util/mod.ts";
import { decompress } from "./compression.ts";
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

/**
 * A cursor over a batch's records. Varint readers set `ok` false (and return 0) instead of
 * throwing when a varint is too long or runs past `limit`.
 */
class RecordCursor {
  buf: Uint8Array = new Uint8Array(0);
  p = 0;
  limit = 0;
  ok = true;
  /** Set by varlong when the value did not fit the fast path; the value is then in `big`. */
  isBig = false;
  big = 0n;

  /** Kafka's ByteUtils.readVarint: zigzag int32 in at most 5 bytes. */
  varint(): number {
    const buf = this.buf;
    const limit = this.limit;
    let p = this.p;
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      if (p >= limit || shift > 28) {
        this.ok = false;
        return 0;
      }
      b = buf[p++];
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    this.p = p;
    return (v >>> 1) ^ -(v & 1);
  }

  /** Kafka's ByteUtils.readVarlong: zigzag int64 in at most 10 bytes; a number when it is small. */
  varlong(): number {
    const buf = this.buf;
    const limit = this.limit;
    const start = this.p;
    let p = start;
    let u = 0;
    let scale = 1;
    let shift = 0;
    let b: number;
    this.isBig = false;
    do {
      if (p >= limit) {
        this.ok = false;
        return 0;
      }
      if (shift > fastVarlongShiftMax) return this.varlongBig(start);
      b = buf[p++];
      u += (b & 0x7f) * scale;
      scale *= 128;
      shift += 7;
    } while (b & 0x80);
    this.p = p;
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  private varlongBig(start: number): number {
    let p = start;
    let u = 0n;
    let shift = 0n;
    let b: number;
    do {
      if (p >= this.limit || shift > 63n) {
        this.ok = false;
        return 0;
      }
      b = this.buf[p++];
      u |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    u = BigInt.asUintN(64, u);
    this.p = p;
    this.isBig = true;
    this.big = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
    return 0;
  }

  /** Skips a nullable bytes field (length varint, -1 null); false when malformed. */
  skipBytes(): boolean {
    const n = this.varint();
    if (!this.ok || n < -1 || n > this.limit - this.p) return (this.ok = false);
    if (n > 0) this.p += n;
    return true;
  }
}

/** What walking one batch's records found; reused across batches. */
class BatchWalk {
  readonly cur = new RecordCursor();
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
    const cur = this.cur;
    const rules = this.rules;
    const bounds = this.bounds;
    cur.buf = buf;
    cur.p = start;
    cur.ok = true;
    this.framing = "";
    this.maxNum = -1;
    this.maxBig = null;
    const baseNum = Number(baseTimestamp);
    const baseSafe = Number.isSafeInteger(baseNum);
    const checkRange = !rules.logAppendTime;
    for (let i = 0; i < count; i++) {
      cur.limit = end;
      if (cur.p >= end) {
        this.framing = `batch declares ${count} records but holds ${i}`;
        return;
      }
      const length = cur.varint();
      if (!cur.ok || length < 0 || length > end - cur.p) {
        this.framing = `Invalid record size: record ${i} declares ${cur.ok ? length : "a malformed"} length with ${end - cur.p} bytes left`;
        return;
      }
      const recordEnd = cur.p + length;
      cur.limit = recordEnd;
      if (length === 0) {
        this.framing = `record ${i} is empty`;
        return;
      }
      cur.p++; // attributes: unused in v2, as Kafka leaves them
      const delta = cur.varlong();
      const offsetDelta = cur.varint();
      const keyLength = cur.varint();
      if (!cur.ok || keyLength < -1 || keyLength > recordEnd - cur.p) {
        this.framing = `Found invalid record structure in record ${i}`;
        return;
      }
      if (keyLength > 0) cur.p += keyLength;
      if (!cur.skipBytes()) {
        this.framing = `Found invalid record structure in record ${i}`;
        return;
      }
      const headerCount = cur.varint();
      if (!cur.ok || headerCount < 0 || headerCount > recordEnd - cur.p) {
        this.framing = `Found invalid number of record headers ${cur.ok ? headerCount : "(malformed)"} in record ${i}`;
        return;
      }
      for (let h = 0; h < headerCount; h++) {
        const keyLength = cur.varint();
        if (!cur.ok || keyLength < 0 || keyLength > recordEnd - cur.p) {
          this.framing = `Invalid header key size in record ${i}`;
          return;
        }
        cur.p += keyLength;
        if (!cur.skipBytes()) {
          this.framing = `Invalid header value size in record ${i}`;
          return;
        }
      }
      if (cur.p !== recordEnd) {
        this.framing = `Invalid record size: expected to read ${length} bytes in record ${i}, but instead read ${cur.p - (recordEnd - length)}`;
        return;
      }
      if (offsetDelta !== i) {
        this.recordError(i, `offset delta ${offsetDelta} of record ${i} in topic partition ${rules.topicPartition}; the deltas must be 0, 1, 2 …`, false);
        continue;
      }
      if (rules.compacted && keyLength === -1) {
        this.recordError(i, `Compacted topic cannot accept message without key in topic partition ${rules.topicPartition}`, false);
        continue;
      }
      // The record's timestamp, as a double when exact, else as a bigint.
      let tsNum = 0;
      let tsBig: bigint | null = null;
      if (latTimestamp !== null) tsBig = latTimestamp;
      else if (!cur.isBig && baseSafe && Number.isSafeInteger(baseNum + delta)) tsNum = baseNum + delta;
      else tsBig = baseTimestamp + (cur.isBig ? cur.big : BigInt(delta));
      if (tsBig !== null && tsBig >= -safeMax && tsBig <= safeMax) {
        tsNum = Number(tsBig);
        tsBig = null;
      }
      if (checkRange && (tsBig !== null || tsNum !== -1)) {
        if (tsBig !== null && (tsBig > int64Max || tsBig < int64Min)) {
          this.recordError(i, `Timestamp ${tsBig} of message with offset ${i} is outside int64 (base ${baseTimestamp})`, true);
          continue;
        }
        if (tsBig !== null ? bounds.outOfRangeBig(tsBig) : tsNum < bounds.lowerNum || tsNum > bounds.upperNum) {
          this.recordError(i, bounds.describe(tsBig ?? tsNum, i), true);
          continue;
        }
      } else if (latTimestamp !== null) {
        this.recordError(i, `Invalid timestamp type in message ${i}. Producer should not set timestamp type to LogAppendTime.`, true);
        continue;
      }
      if (tsBig === null) {
        if (tsNum > this.maxNum) this.maxNum = tsNum;
      } else if (this.maxBig === null || tsBig > this.maxBig) this.maxBig = tsBig;
    }
    cur.limit = end;
    if (cur.p !== end) this.framing = `Incorrect declared batch size, ${end - cur.p} bytes of records still remaining after ${count} records`;
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

/** Checks of the producer fields (Kafka's validateBatch, and the producer state strand lacks). */
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
    if (producerId < 0n) return fail(ErrorCode.INVALID_RECORD, `Transactional record batch without a producer id in topic partition ${tp}`);
    return fail(ErrorCode.INVALID_TXN_STATE, `Transactional write to ${tp} that no transaction coordinator added (strand has no transactions)`);
  }
  if (producerId >= 0n) {
    return fail(
      ErrorCode.UNKNOWN_PRODUCER_ID,
      `producer id ${producerId} is unknown: strand keeps no producer state (no InitProducerId), so idempotent writes cannot be deduplicated`,
    );
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
    if (crc32c(records, pos + BatchField.attributes, pos + size) !== crc) {
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
