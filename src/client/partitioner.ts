// Kafka's default partitioner for keyed records: murmur2 of the key bytes, made positive, modulo
// the partition count (the Java client's BuiltInPartitioner), so a keyed record lands where a
// Java producer would put it. Records without a key are spread by the producer (sticky batches).

/** Kafka's Utils.murmur2 (seed 0x9747b28c), as a signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  switch (length % 4) {
    case 3:
      h ^= data[tail + 2] << 16;
    // falls through
    case 2:
      h ^= data[tail + 1] << 8;
    // falls through
    case 1:
      h ^= data[tail];
      h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition of a keyed record among `partitions`. */
export function partitionForKey(key: Uint8Array, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
