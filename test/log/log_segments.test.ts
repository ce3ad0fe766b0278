// LogSegments: the ordered segment collection a Log owns (floor/higher lookups, add/remove, sizes).

import assert from "node:assert/strict";
import { test } from "node:test";
import { LogSegments } from "../../src/log/log_segments.ts";
import { LogSegment } from "../../src/log/segment.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform = await loadPlatform();
const config = { indexIntervalBytes: 4096, segmentIndexBytes: 1024 * 1024 };

/** A segment at base holding `count` offsets in one batch. */
function segmentAt(dir: string, base: number, count: number): LogSegment {
  const seg = LogSegment.create(platform, dir, base, config);
  if (count > 0) seg.append(buildBatch(valueRecords(count, `o${base}-`, 10), { baseOffset: BigInt(base) }), base, base + count - 1);
  return seg;
}

test("log segments: floor and higher lookups, sizes, removal from either end, and the order kept on add", async () => {
  await withTempDir((dir) => {
    const segs = new LogSegments([segmentAt(dir, 0, 10), segmentAt(dir, 10, 5), segmentAt(dir, 20, 0)]);
    try {
      assert.deepEqual(segs.baseOffsets, [0, 10, 20]);
      assert.equal(segs.count, 3);
      assert.equal(segs.active.baseOffset, 20);
      assert.equal(segs.sizeBytes, segs.all.reduce((n, s) => n + s.sizeBytes, 0));
      assert.ok(segs.sizeBytes > 0);
      assert.deepEqual([0, 9, 10, 19, 20, 1000].map((o) => segs.floorIndex(o)), [0, 0, 1, 1, 2, 2]);
      assert.equal(segs.higherSegment(segs.first)?.baseOffset, 10);
      assert.equal(segs.higherSegment(segs.active), null, "nothing after the active segment");
      // A new active segment may not start below the log end offset.
      const below = segmentAt(dir, 15, 0);
      assert.throws(() => segs.add(below), /ordered/);
      below.close();
      assert.equal(segs.count, 3, "a refused segment is not added");
      const removed = segs.removeOldest(1);
      assert.deepEqual(removed.map((s) => s.baseOffset), [0]);
      removed[0].close();
      assert.equal(segs.first.baseOffset, 10);
      assert.throws(() => segs.removeOldest(segs.count), /active segment/);
    } finally {
      for (const s of segs.all) s.close();
    }
  });
});
