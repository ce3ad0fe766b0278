// Byte-level codec primitives for the wire and the disk: a Reader that never throws halfway
// (a short or malformed read marks it bad and later reads return zeros; the caller checks `ok`
// once), a growable Writer, zig-zag and unsigned varints as Kafka writes them, and UUIDs.
// Big-endian throughout, as Kafka is. 64-bit integers are bigint at this layer.

import { assert } from "./assert.ts";

const textDecoder = new TextDecoder("utf-8", { fatal: true });
const textEncoder = new TextEncoder();

export class Reader {
  readonly view: DataView;
  pos: number;
  /** Set by the first failed read; reads after it return zero values. */
  error: string | null = null;

  constructor(readonly buf: Uint8Array, start = 0, readonly end = buf.length) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
  }

  get ok(): boolean {
    return this.error === null;
  }
  get remaining(): number {
    return this.end - this.pos;
  }

  fail(why: string): void {
    if (this.error === null) this.error = `${why} at byte ${this.pos}`;
    this.pos = this.end;
  }

  /** Reserves n bytes; returns the start position or -1 when they are not there. */
  private take(n: number): number {
    if (this.error !== null) return -1;
    if (n < 0 || this.pos + n > this.end) {
      this.fail(`short read: wanted ${n}, have ${this.end - this.pos}`);
      return -1;
    }
    const p = this.pos;
    this.pos += n;
    return p;
  }

  int8(): number {
    const p = this.take(1);
    return p < 0 ? 0 : this.view.getInt8(p);
  }
  int16(): number {
    const p = this.take(2);
    return p < 0 ? 0 : this.view.getInt16(p);
  }
  uint16(): number {
    const p = this.take(2);
    return p < 0 ? 0 : this.view.getUint16(p);
  }
  int32(): number {
    const p = this.take(4);
    return p < 0 ? 0 : this.view.getInt32(p);
  }
  uint32(): number {
    const p = this.take(4);
    return p < 0 ? 0 : this.view.getUint32(p);
  }
  int64(): bigint {
    const p = this.take(8);
    return p < 0 ? 0n : this.view.getBigInt64(p);
  }
  float64(): number {
    const p = this.take(8);
    return p < 0 ? 0 : this.view.getFloat64(p);
  }
  bool(): boolean {
    return this.int8() !== 0;
  }

  /** Unsigned LEB128 varint, at most 5 bytes (32 bits). */
  uvarint(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const p = this.take(1);
      if (p < 0) return 0;
      const b = this.buf[p];
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) break;
        return result;
      }
    }
    this.fail("uvarint longer than 32 bits");
    return 0;
  }
  /** Zig-zag signed varint (32 bits). */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }
  /** Zig-zag signed varlong (64 bits), as record fields use. */
  varlong(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const p = this.take(1);
      if (p < 0) return 0n;
      const b = this.buf[p];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return (result >> 1n) ^ -(result & 1n);
    }
    this.fail("varlong longer than 64 bits");
    return 0n;
  }

  /** A view (not a copy) of the next n bytes. */
  bytes(n: number): Uint8Array {
    const p = this.take(n);
    return p < 0 ? new Uint8Array(0) : this.buf.subarray(p, p + n);
  }
  utf8(n: number): string {
    const b = this.bytes(n);
    if (this.error !== null) return "";
    try {
      return textDecoder.decode(b);
    } catch {
      this.fail("invalid UTF-8");
      return "";
    }
  }
  uuid(): Uint8Array {
    return this.bytes(16);
  }
}

/** Where a Writer's grown buffers come from and go back to (FrameBufferCache), instead of new ones. */
export interface WriterBuffers {
  take(size: number): Uint8Array;
  give(buf: Uint8Array): void;
}

export class Writer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  /** Set: buffers grown into are taken here, and the ones grown out of given back. */
  buffers: WriterBuffers | null = null;
  /** buf came from `buffers`. */
  private taken = false;

  /** A new buffer of initialBytes, or (a Uint8Array) a buffer to write over from its start. */
  constructor(initialBytes: number | Uint8Array = 256) {
    this.buf = typeof initialBytes === "number" ? new Uint8Array(initialBytes) : initialBytes;
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  private ensure(n: number): number {
    const need = this.pos + n;
    if (need > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < need) size *= 2;
      const next = this.buffers === null ? new Uint8Array(size) : this.buffers.take(size);
      next.set(this.buf.subarray(0, this.pos));
      if (this.taken) this.buffers!.give(this.buf);
      this.taken = this.buffers !== null;
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const p = this.pos;
    this.pos = need;
    return p;
  }

  int8(v: number): this {
    const p = this.ensure(1);
    this.view.setInt8(p, v);
    return this;
  }
  int16(v: number): this {
    const p = this.ensure(2);
    this.view.setInt16(p, v);
    return this;
  }
  uint16(v: number): this {
    const p = this.ensure(2);
    this.view.setUint16(p, v);
    return this;
  }
  int32(v: number): this {
    const p = this.ensure(4);
    this.view.setInt32(p, v);
    return this;
  }
  uint32(v: number): this {
    const p = this.ensure(4);
    this.view.setUint32(p, v);
    return this;
  }
  int64(v: bigint): this {
    const p = this.ensure(8);
    this.view.setBigInt64(p, BigInt.asIntN(64, v));
    return this;
  }
  float64(v: number): this {
    const p = this.ensure(8);
    this.view.setFloat64(p, v);
    return this;
  }
  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }
  uvarint(v: number): this {
    assert(Number.isInteger(v) && v >= 0 && v <= 0xffffffff, "uvarint in 0..2^32-1");
    while (v >= 0x80) {
      const p = this.ensure(1);
      this.buf[p] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    const p = this.ensure(1);
    this.buf[p] = v;
    return this;
  }
  varint(v: number): this {
    assert(Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31, "varint in int32 range");
    return this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  varlong(v: bigint): this {
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    while (u >= 0x80n) {
      const p = this.ensure(1);
      this.buf[p] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    const p = this.ensure(1);
    this.buf[p] = Number(u);
    return this;
  }
  bytes(b: Uint8Array): this {
    const p = this.ensure(b.length);
    this.buf.set(b, p);
    return this;
  }
  /** Reserves n bytes to patch later (a length or CRC); returns their position. */
  reserve(n: number): number {
    return this.ensure(n);
  }
  /** The written bytes, as a view of the internal buffer. */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

export function utf8Bytes(s: string): Uint8Array {
  return textEncoder.encode(s);
}

export function utf8Length(s: string): number {
  // Fast path for ASCII, which topic names and client ids almost always are.
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  return ascii ? s.length : textEncoder.encode(s).length;
}

export function uuidToString(u: Uint8Array): string {
  let hex = "";
  for (const b of u) hex += b.toString(16).padStart(2, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const base64urlChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Kafka prints topic ids and cluster ids as URL-safe base64 without padding (22 chars). */
export function uuidToBase64(u: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 3 <= u.length; i += 3) {
    const n = (u[i] << 16) | (u[i + 1] << 8) | u[i + 2];
    out += base64urlChars[(n >> 18) & 63] + base64urlChars[(n >> 12) & 63] +
      base64urlChars[(n >> 6) & 63] + base64urlChars[n & 63];
  }
  const rest = u.length - i;
  if (rest === 1) {
    const n = u[i] << 16;
    out += base64urlChars[(n >> 18) & 63] + base64urlChars[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (u[i] << 16) | (u[i + 1] << 8);
    out += base64urlChars[(n >> 18) & 63] + base64urlChars[(n >> 12) & 63] + base64urlChars[(n >> 6) & 63];
  }
  return out;
}

export function uuidFromBase64(s: string): Uint8Array | null {
  if (s.length !== 22) return null;
  const out = new Uint8Array(16);
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (const ch of s) {
    const v = base64urlChars.indexOf(ch);
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (o < 16) out[o++] = (acc >> bits) & 0xff;
    }
  }
  return o === 16 ? out : null;
}

export const zeroUuid = new Uint8Array(16);

/** A random (version 4) UUID that is never the all-zero or the reserved "metadata" id. */
export function randomUuid(random: (out: Uint8Array) => void): Uint8Array {
  const u = new Uint8Array(16);
  random(u);
  u[6] = (u[6] & 0x0f) | 0x40;
  u[8] = (u[8] & 0x3f) | 0x80;
  return u;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Uint8Array's own base64 (ES2026; Bun 1.4 and Deno 2.9 have it) is some ten times faster than
// btoa over a binary string; btoa/atob (web globals, one char per byte) stay as the fallback.
const nativeBase64 = typeof (Uint8Array.prototype as { toBase64?: unknown }).toBase64 === "function" &&
  typeof (Uint8Array as { fromBase64?: unknown }).fromBase64 === "function";

/** Standard base64 with padding (RFC 4648 §4), as SCRAM and the embedded registry's snapshot use. */
export function base64Encode(bytes: Uint8Array): string {
  if (nativeBase64) return (bytes as unknown as { toBase64(): string }).toBase64();
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/** The bytes of standard padded base64, or null for anything else (no whitespace, no URL alphabet). */
export function base64Decode(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  try {
    if (nativeBase64) return (Uint8Array as unknown as { fromBase64(t: string): Uint8Array }).fromBase64(text);
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** Compares in time that depends only on the lengths, for secrets (MessageDigest.isEqual). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
