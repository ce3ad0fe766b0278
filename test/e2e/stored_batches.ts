// Reads the record batch headers of a partition's first segment straight from the log dir, so an
// e2e test can check that the broker stored a client's batches as sent (compression included).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const Codec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

/** The set of compression codecs (attributes & 7) of the batches in <topic>-<partition>'s first segment. */
export function storedCodecs(logDir: string, topic: string, partition: number): Set<number> {
  const log = readFileSync(join(logDir, `${topic}-${partition}`, "00000000000000000000.log"));
  const codecs = new Set<number>();
  // Batch header: baseOffset int64, batchLength int32 (counts the bytes after itself),
  // partitionLeaderEpoch int32, magic int8 (byte 16), crc uint32, attributes int16 (byte 21).
  for (let pos = 0; pos + 23 <= log.length; pos += 12 + log.readInt32BE(pos + 8)) {
    assert.equal(log[pos + 16], 2, `${topic}-${partition}: batch at byte ${pos} has magic 2`);
    codecs.add(log.readInt16BE(pos + 21) & 7);
  }
  return codecs;
}
