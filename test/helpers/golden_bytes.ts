// Bytes built by hand from Kafka's documented layouts, independent of the codec under test:
// big-endian integers, int16-length strings (-1 for null), int32-length bytes, compact strings.
// Golden-byte tests of version-prefixed records (__consumer_offsets, __transaction_state) use them.

export function i16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}
export function i32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}
export function i64(n: bigint): number[] {
  const out: number[] = [];
  const u = BigInt.asUintN(64, n);
  for (let shift = 56n; shift >= 0n; shift -= 8n) out.push(Number((u >> shift) & 0xffn));
  return out;
}
export function ascii(s: string): number[] {
  return [...s].map((c) => c.charCodeAt(0));
}
/** Non-compact string: int16 length (-1 for null), bytes. */
export function str(s: string | null): number[] {
  return s === null ? i16(-1) : [...i16(s.length), ...ascii(s)];
}
/** Non-compact bytes: int32 length, bytes. */
export function byt(b: number[]): number[] {
  return [...i32(b.length), ...b];
}
/** Compact string: unsigned varint length + 1 (lengths below 127 here), bytes. */
export function cstr(s: string): number[] {
  return [s.length + 1, ...ascii(s)];
}
export function bytes(...parts: number[][]): Uint8Array {
  return Uint8Array.from(parts.flat());
}
