// CRC32 (IEEE 802.3, polynomial 0xEDB88320, as zlib computes it), which legacy Kafka messages
// (magic 0 and 1) carry. Byte-at-a-time with one table: it serves only the legacy up-conversion
// path, so it need not be as fast as crc32c.ts, which every produced batch goes through.

const table = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  table[n] = c >>> 0;
}

export function crc32(data: Uint8Array, start = 0, end = data.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
