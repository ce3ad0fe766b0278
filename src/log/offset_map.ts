// OffsetMap: the cleaner's dedupe map from a record key to the last offset holding it (Kafka's
// SkimpyOffsetMap), bounded by log.cleaner.dedupe.buffer.size.
//
// Format: an open-addressing hash table over two typed arrays, 24 bytes a slot as in Kafka:
//   hashes   Int32Array, 4 words a slot: the key's 128-bit MurmurHash3 (x86_128, seed 0)
//   offsets  Float64Array, 1 a slot: offset + 1 (0 marks an empty slot, so a new array is empty)
// Keys are not stored, only their 128-bit hashes: two different keys share a hash with
// probability about n²/2^129, as with Kafka's MD5, and memory per key stays fixed whatever the
// key's size. Probing is linear from hash word 0 modulo the capacity.
//
// Invariants:
// - capacity <= slotsMax = floor(min(bufferBytes, 2^31 - 1) / 24); the table starts small and doubles (rehashing
//   from the stored hashes) up to slotsMax, so a small log never pays for the whole buffer.
// - size <= maxEntries = floor(slotsMax * loadFactor) (Kafka's log.cleaner.io.buffer.load.factor,
//   0.9): the caller asks fits(n) before putting a batch's n keys, and stops the dirty section
//   there when they do not fit (Kafka's "clean only up to what fits").
// - put keeps the larger offset for a key (the cleaner puts in offset order anyway).

import { assert } from "../util/mod.ts";

/** Bytes one slot takes: a 128-bit hash and a 64-bit offset (Kafka's figure). */
export const offsetMapSlotBytes = 24;
const initialSlots = 1024;
/** Load at which a table below its maximum capacity doubles. */
const growLoad = 0.7;

export class OffsetMap {
  readonly slotsMax: number;
  readonly maxEntries: number;
  private capacity: number;
  private hashes: Int32Array;
  private offsets: Float64Array;
  private count = 0;
  /** Offset after the last batch whose keys went in (Kafka's latestOffset + 1), -1 when none. */
  latestOffset = -1;
  private readonly h = new Int32Array(4);

  constructor(bufferBytes: number, loadFactor = 0.9) {
    // Kafka caps one cleaner's buffer at Int.MaxValue bytes too.
    this.slotsMax = Math.max(1, Math.floor(Math.min(bufferBytes, 2 ** 31 - 1) / offsetMapSlotBytes));
    this.maxEntries = Math.max(1, Math.floor(this.slotsMax * loadFactor));
    this.capacity = Math.min(this.slotsMax, initialSlots);
    this.hashes = new Int32Array(this.capacity * 4);
    this.offsets = new Float64Array(this.capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes the table holds now (at most slotsMax * 24). */
  get allocatedBytes(): number {
    return this.capacity * offsetMapSlotBytes;
  }

  /** Whether n more keys are sure to fit. */
  fits(n: number): boolean {
    return this.count + n <= this.maxEntries;
  }

  clear(): void {
    this.count = 0;
    this.latestOffset = -1;
    this.capacity = Math.min(this.slotsMax, initialSlots);
    this.hashes = new Int32Array(this.capacity * 4);
    this.offsets = new Float64Array(this.capacity);
  }

  /** Records `offset` as the key's latest (a smaller one than already held is ignored). */
  put(key: Uint8Array, offset: number): void {
    assert(this.count < this.maxEntries || this.get(key) >= 0, "the offset map is not full");
    if (this.count + 1 > this.capacity * growLoad && this.capacity < this.slotsMax) this.grow();
    murmur3x86_128(key, this.h);
    const slot = this.find(this.hashes, this.offsets, this.capacity, this.h);
    const held = this.offsets[slot];
    if (held === 0) this.count++;
    if (offset + 1 > held) {
      this.offsets[slot] = offset + 1;
      this.hashes.set(this.h, slot * 4);
    }
  }

  /** The key's latest offset, or -1 when the map does not hold it. */
  get(key: Uint8Array): number {
    murmur3x86_128(key, this.h);
    return this.offsets[this.find(this.hashes, this.offsets, this.capacity, this.h)] - 1;
  }

  /** The slot holding hash h, or the empty slot where it would go. */
  private find(hashes: Int32Array, offsets: Float64Array, capacity: number, h: Int32Array): number {
    let slot = (h[0] >>> 0) % capacity;
    for (;;) {
      if (offsets[slot] === 0) return slot;
      const at = slot * 4;
      if (hashes[at] === h[0] && hashes[at + 1] === h[1] && hashes[at + 2] === h[2] && hashes[at + 3] === h[3]) return slot;
      slot = slot + 1 === capacity ? 0 : slot + 1;
    }
  }

  private grow(): void {
    const capacity = Math.min(this.slotsMax, this.capacity * 2);
    const hashes = new Int32Array(capacity * 4);
    const offsets = new Float64Array(capacity);
    const h = new Int32Array(4);
    for (let s = 0; s < this.capacity; s++) {
      if (this.offsets[s] === 0) continue;
      h.set(this.hashes.subarray(s * 4, s * 4 + 4));
      const to = this.find(hashes, offsets, capacity, h);
      hashes.set(h, to * 4);
      offsets[to] = this.offsets[s];
    }
    this.capacity = capacity;
    this.hashes = hashes;
    this.offsets = offsets;
  }
}

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** MurmurHash3 x86_128 (Austin Appleby's, seed 0) of data into out[0..4), words h1..h4. */
export function murmur3x86_128(data: Uint8Array, out: Int32Array): void {
  const len = data.length;
  const blocksEnd = len - (len & 15);
  let h1 = 0, h2 = 0, h3 = 0, h4 = 0;
  const word = (i: number) => data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
  for (let i = 0; i < blocksEnd; i += 16) {
    let k1 = word(i), k2 = word(i + 4), k3 = word(i + 8), k4 = word(i + 12);
    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 ^= k1;
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 ^= k2;
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 ^= k3;
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 ^= k4;
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  let k1 = 0, k2 = 0, k3 = 0, k4 = 0;
  const t = blocksEnd;
  switch (len & 15) {
    case 15: k4 ^= data[t + 14] << 16; // falls through
    case 14: k4 ^= data[t + 13] << 8; // falls through
    case 13:
      k4 ^= data[t + 12];
      h4 ^= Math.imul(rotl(Math.imul(k4, C4), 18), C1);
      // falls through
    case 12: k3 ^= data[t + 11] << 24; // falls through
    case 11: k3 ^= data[t + 10] << 16; // falls through
    case 10: k3 ^= data[t + 9] << 8; // falls through
    case 9:
      k3 ^= data[t + 8];
      h3 ^= Math.imul(rotl(Math.imul(k3, C3), 17), C4);
      // falls through
    case 8: k2 ^= data[t + 7] << 24; // falls through
    case 7: k2 ^= data[t + 6] << 16; // falls through
    case 6: k2 ^= data[t + 5] << 8; // falls through
    case 5:
      k2 ^= data[t + 4];
      h2 ^= Math.imul(rotl(Math.imul(k2, C2), 16), C3);
      // falls through
    case 4: k1 ^= data[t + 3] << 24; // falls through
    case 3: k1 ^= data[t + 2] << 16; // falls through
    case 2: k1 ^= data[t + 1] << 8; // falls through
    case 1:
      k1 ^= data[t];
      h1 ^= Math.imul(rotl(Math.imul(k1, C1), 15), C2);
  }
  h1 ^= len;
  h2 ^= len;
  h3 ^= len;
  h4 ^= len;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h3 = fmix32(h3);
  h4 = fmix32(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  out[0] = h1;
  out[1] = h2;
  out[2] = h3;
  out[3] = h4;
}
