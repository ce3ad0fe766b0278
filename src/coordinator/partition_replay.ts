// Replaying a coordinator's internal partition (__consumer_offsets, __transaction_state) from its
// start: whole batches in chunks of at most chunkBytes, every record of each non-control batch
// handed to onRecord in log order with its batch's header (producer id, transactional bit), each
// control batch's first record key to onControl (transaction markers), an unreadable batch logged and skipped (start-up must survive
// any batch once accepted). Between chunks the replay yields on the clock, so a large partition
// does not stall the broker; it stops early when stillLoading() says the partition moved away.

import type { Clock } from "../platform/mod.ts";
import { type BatchInfo, forEachBatch, readBatchRecords } from "../protocol/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { OffsetsTopicLog } from "./group_metadata_manager.ts";

/** Resolves to the records replayed, or null when the load was abandoned. */
export async function replayPartition(
  log: OffsetsTopicLog,
  topic: string,
  partition: number,
  chunkBytes: number,
  clock: Clock,
  logger: Logger,
  onRecord: (key: Uint8Array | null, value: Uint8Array | null, batch: BatchInfo) => void,
  stillLoading: () => boolean,
  onControl?: (batch: BatchInfo, key: Uint8Array | null) => void,
): Promise<number | null> {
  let offset = log.logStartOffset(partition);
  let records = 0;
  for (;;) {
    const chunk = log.read(partition, offset, chunkBytes);
    if (chunk === null || chunk.records.length === 0) return records;
    let next = offset;
    forEachBatch(chunk.records, (pos) => {
      const r = readBatchRecords(chunk.records, pos);
      if (!r.ok) {
        logger.warn({ partition, reason: r.message }, `skipped an unreadable batch of ${topic}`);
        return;
      }
      next = r.batch.lastOffset + 1;
      if (r.batch.isControl) {
        if (r.records.length > 0) onControl?.(r.batch, r.records[0].key);
        return;
      }
      for (const rec of r.records) {
        records++;
        onRecord(rec.key, rec.value, r.batch);
      }
    });
    if (next <= offset) return records;
    offset = next;
    await new Promise<void>((res) => clock.setTimeout(res, 0));
    if (!stillLoading()) return null;
  }
}
