// Reads the record batch headers of a partition's first segment straight from the log dir, so an
// e2e test can check that the broker stored a client's batches as sent (compression included).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const Codec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

export interface StoredBatch {
  codec: number;
  records: number;
  /** An idempotent producer's id (-1: none), epoch and first sequence. */
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
}

/** The codec (attributes & 7), record count and producer fields of each batch in <topic>-<partition>'s first segment. */
export function storedBatches(logDir: string, topic: string, partition: number): StoredBatch[] {
  const log = readFileSync(join(logDir, `${topic}-${partition}`, "00000000000000000000.log"));
  const batches: StoredBatch[] = [];
  // Batch header: baseOffset int64, batchLength int32 (counts the bytes after itself),
  // partitionLeaderEpoch int32, magic int8 (byte 16), crc uint32, attributes int16 (byte 21), ...,
  // producerId int64 (byte 43), producerEpoch int16 (51), baseSequence int32 (53), records count
  // int32 (byte 57), 61 bytes in all.
  for (let pos = 0; pos + 61 <= log.length; pos += 12 + log.readInt32BE(pos + 8)) {
    assert.equal(log[pos + 16], 2, `${topic}-${partition}: batch at byte ${pos} has magic 2`);
    batches.push({
      codec: log.readInt16BE(pos + 21) & 7,
      records: log.readInt32BE(pos + 57),
      producerId: log.readBigInt64BE(pos + 43),
      producerEpoch: log.readInt16BE(pos + 51),
      baseSequence: log.readInt32BE(pos + 53),
    });
  }
  return batches;
}

/**
 * Checks a partition's batches were stored with the codec the client used. Clients (kafka-python,
 * librdkafka) send a batch uncompressed when compressing would not make it smaller, which happens
 * to small batches (one record sent before the rest queue up), so only batches of at least
 * `minRecords` must carry the codec, and at least one batch must.
 */
export function assertStoredCodec(logDir: string, topic: string, partition: number, codec: number, minRecords = 20): void {
  const batches = storedBatches(logDir, topic, partition);
  const why = `${topic}-${partition} batches (codec, records): ${batches.map((b) => `${b.codec}:${b.records}`).join(" ")}`;
  assert.ok(batches.some((b) => b.codec === codec), why);
  for (const b of batches) {
    if (codec === Codec.none || b.records >= minRecords) assert.equal(b.codec, codec, why);
    else assert.ok(b.codec === codec || b.codec === Codec.none, why);
  }
}

/**
 * Checks an idempotent producer's batches were stored once each: one producer id (>= 0) and
 * epoch, sequences from 0 without gap or repeat, `records` records in all. Returns the producer id.
 */
export function assertIdempotentBatches(logDir: string, topic: string, partition: number, records: number): bigint {
  const batches = storedBatches(logDir, topic, partition);
  const why = `${topic}-${partition} batches (producer id, epoch, base sequence, records): ` +
    batches.slice(0, 20).map((b) => `${b.producerId}/${b.producerEpoch}/${b.baseSequence}/${b.records}`).join(" ");
  assert.ok(batches.length > 0, why);
  const { producerId, producerEpoch } = batches[0];
  assert.ok(producerId >= 0n, `an idempotent producer's id: ${why}`);
  let seq = 0;
  for (const b of batches) {
    assert.deepEqual([b.producerId, b.producerEpoch, b.baseSequence], [producerId, producerEpoch, seq], why);
    seq += b.records;
  }
  assert.equal(seq, records, why);
  return producerId;
}
