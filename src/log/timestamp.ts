// Timestamp: a record batch's int64 timestamp inside the log layer, exact over the whole int64
// range (Kafka accepts any of them with its default configs: message.timestamp.after.max.ms and
// before.max.ms are Long.MAX; 2^63-1 and negative values other than -1 are legal).
//
// Representation: a `number` when the value is a safe integer (every real clock time), a `bigint`
// otherwise. The form is canonical (one value, one form), so:
// - relational operators (<, <=, >, >=) compare any two Timestamps exactly (JavaScript compares a
//   number with a bigint by mathematical value), and against a plain number such as `nowMs`;
// - `===` is value equality;
// - the hot path (reading a batch's maxTimestamp, indexing it) allocates nothing for clock-like
//   values: the 8 bytes are read as two int32 halves and a bigint is built only past 2^53.
// Arithmetic must go through the helpers here (never `-` or `+` on a Timestamp), and a Timestamp
// is never put in a log line as is (pino cannot serialize a bigint): use timestampToString.

import { BatchField } from "../protocol/mod.ts";

export type Timestamp = number | bigint;

/** Kafka's RecordBatch.NO_TIMESTAMP. */
export const NO_TIMESTAMP = -1;

const TWO_32 = 0x1_0000_0000;
const INT64_MAX = 0x7fff_ffff_ffff_ffffn;
const INT64_MIN = -0x8000_0000_0000_0000n;

/** The int64 whose big-endian halves are hi (int32) and lo (uint32), in canonical form. */
export function timestampFromParts(hi: number, lo: number): Timestamp {
  // |value| < 2^53 - 2^32 here: exact and safe (the hot path: one multiply-add, no call).
  if (hi > -0x200000 && hi < 0x1fffff) return hi * TWO_32 + lo;
  return timestampFromBigInt(BigInt(hi) * 0x1_0000_0000n + BigInt(lo));
}

/** A bigint in the int64 range, in canonical form (wire values, e.g. ListOffsets' timestamp). */
export function timestampFromBigInt(v: bigint): Timestamp {
  const w = BigInt.asIntN(64, v);
  return w >= -0x1f_ffff_ffff_ffffn && w <= 0x1f_ffff_ffff_ffffn ? Number(w) : w;
}

/** Big-endian int64 at b[i]. */
export function timestampAt(b: Uint8Array, i: number): Timestamp {
  const hi = (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
  const lo = ((b[i + 4] << 24) | (b[i + 5] << 16) | (b[i + 6] << 8) | b[i + 7]) >>> 0;
  // timestampFromParts' fast path, inlined (the per-batch path of appends).
  if (hi > -0x200000 && hi < 0x1fffff) return hi * TWO_32 + lo;
  return timestampFromParts(hi, lo);
}

/** Big-endian int64 at dv[at]. */
export function timestampFromView(dv: DataView, at: number): Timestamp {
  return timestampFromParts(dv.getInt32(at), dv.getUint32(at + 4));
}

/** The batch's maxTimestamp header field; `at` is where the batch starts in b. */
export function batchMaxTimestampAt(b: Uint8Array, at: number): Timestamp {
  return timestampAt(b, at + BatchField.maxTimestamp);
}

/** Writes ts big-endian at dv[at]. */
export function setTimestamp(dv: DataView, at: number, ts: Timestamp): void {
  if (typeof ts === "bigint") {
    dv.setBigInt64(at, ts);
    return;
  }
  const hi = Math.floor(ts / TWO_32);
  dv.setInt32(at, hi);
  dv.setUint32(at + 4, ts - hi * TWO_32);
}

/** The high (signed) and low (unsigned) 32-bit halves of ts. */
export function timestampHi(ts: Timestamp): number {
  return typeof ts === "bigint" ? Number(BigInt.asIntN(32, ts >> 32n)) : Math.floor(ts / TWO_32);
}
export function timestampLo(ts: Timestamp): number {
  return typeof ts === "bigint" ? Number(BigInt.asUintN(32, ts)) : ts - Math.floor(ts / TWO_32) * TWO_32;
}

export function maxTimestamp(a: Timestamp, b: Timestamp): Timestamp {
  return a >= b ? a : b;
}

export function minTimestamp(a: Timestamp, b: Timestamp): Timestamp {
  return a <= b ? a : b;
}

/**
 * ts + ms (a clock time plus a duration, e.g. a delete horizon), saturated to the int64 range as
 * Kafka's callers do not need (their Long arithmetic would wrap; a horizon must never wrap into
 * the past).
 */
export function addTimestamp(ts: Timestamp, ms: number): Timestamp {
  if (typeof ts === "number" && Number.isSafeInteger(ms)) {
    const sum = ts + ms;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const wide = BigInt(ts) + BigInt(Math.trunc(ms));
  return timestampFromBigInt(wide > INT64_MAX ? INT64_MAX : wide < INT64_MIN ? INT64_MIN : wide);
}

/** a - b in milliseconds, as a number (inexact only past 2^53, far beyond any duration compared). */
export function timestampDifferenceMs(a: Timestamp, b: Timestamp): number {
  return typeof a === "number" && typeof b === "number" ? a - b : Number(BigInt(a) - BigInt(b));
}

/** For log lines and messages (a bigint cannot go into JSON). */
export function timestampToString(ts: Timestamp): string {
  return String(ts);
}
