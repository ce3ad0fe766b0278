// LeaderEpochFileCache on real files: Kafka's assign rules (monotonic epochs and start offsets,
// conflicting entries truncated), Kafka's endOffsetFor table, truncateFromEnd/FromStart,
// epochForOffset, and leader-epoch-checkpoint written byte for byte in Kafka's format, atomically,
// read back by a new cache, and refused when damaged.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { test } from "node:test";
import {
  CheckpointFormatError,
  type EpochEntry,
  formatLeaderEpochCheckpoint,
  LeaderEpochCheckpointFile,
  LeaderEpochCheckpointFileName,
  LeaderEpochFileCache,
  parseLeaderEpochCheckpoint,
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";

const platform: Platform = await loadPlatform();

async function withCache(fn: (cache: LeaderEpochFileCache, path: string, dir: string) => void | Promise<void>, logger: Logger = silentLogger): Promise<void> {
  const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-epochs-"));
  try {
    const path = `${dir}/${LeaderEpochCheckpointFileName}`;
    await fn(new LeaderEpochFileCache(new LeaderEpochCheckpointFile(platform, path), logger), path, dir);
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
}

const entries = (...pairs: [number, number][]): EpochEntry[] => pairs.map(([epoch, startOffset]) => ({ epoch, startOffset }));
const fileEntries = (path: string) => parseLeaderEpochCheckpoint(nodeFs.readFileSync(path, "utf8"));
const undefinedAnswer = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

test("leader epoch cache: assign appends newer epochs, ignores the latest again, and writes each change", async () => {
  await withCache((cache, path) => {
    assert.equal(cache.latestEpoch, null);
    assert.equal(cache.isEmpty, true);
    assert.equal(nodeFs.existsSync(path), false, "nothing written before the first change");
    assert.equal(cache.assign(2, 10), true);
    assert.equal(cache.latestEpoch, 2);
    assert.deepEqual(fileEntries(path), entries([2, 10]));
    const before = nodeFs.statSync(path).mtimeMs;
    assert.equal(cache.assign(2, 10), false, "same epoch, same offset: no-op");
    assert.equal(cache.assign(2, 15), false, "same epoch, later offset: the epoch keeps its first offset");
    assert.equal(nodeFs.statSync(path).mtimeMs, before, "no-ops write nothing");
    assert.equal(cache.assign(3, 15), true);
    assert.equal(cache.assign(5, 20), true);
    assert.deepEqual(cache.entries, entries([2, 10], [3, 15], [5, 20]));
    assert.deepEqual(fileEntries(path), cache.entries);
    assert.deepEqual(cache.earliestEntry, { epoch: 2, startOffset: 10 });
    assert.deepEqual(cache.latestEntry, { epoch: 5, startOffset: 20 });
  });
});

test("leader epoch cache: non-monotonic entries truncate the conflicting ones (Kafka 3.x), warning only when data is dropped", async () => {
  const w = recordingLogger();
  const warned = () => w.lines.filter((l) => l.level === "warn").length;
  await withCache((cache, path) => {
    cache.assignAll(entries([5, 11], [6, 12], [7, 13]));
    // Same epoch, earlier start (Kafka's shouldTruncateIfMatchingEpochButEarlierStartingOffset).
    assert.equal(cache.assign(7, 12), true);
    assert.deepEqual(cache.entries, entries([5, 11], [7, 12]));
    assert.equal(warned(), 1, "epoch 6 at 12 was dropped: a warning");
    // A newer epoch at the same start as the latest: the latest never got a batch; no warning.
    assert.equal(cache.assign(8, 12), true);
    assert.deepEqual(cache.entries, entries([5, 11], [8, 12]));
    assert.equal(warned(), 1);
    // A lower epoch at a later offset removes every entry with epoch >= it.
    assert.equal(cache.assign(6, 20), true);
    assert.deepEqual(cache.entries, entries([5, 11], [6, 20]));
    // A newer epoch below the latest start removes the entries starting at or after it.
    assert.equal(cache.assign(9, 5), true);
    assert.deepEqual(cache.entries, entries([9, 5]));
    assert.deepEqual(fileEntries(path), entries([9, 5]));
  }, w);
});

test("leader epoch cache: endOffsetFor answers Kafka's table", async () => {
  await withCache((cache) => {
    assert.deepEqual(cache.endOffsetFor(0, 100), undefinedAnswer, "empty cache");
    assert.deepEqual(cache.endOffsetFor(UNDEFINED_EPOCH, 100), undefinedAnswer, "empty cache, undefined epoch");
    cache.assignAll(entries([0, 10], [2, 13], [4, 17]));
    const leo = 30;
    const table: [number, { epoch: number; endOffset: number }][] = [
      [UNDEFINED_EPOCH, undefinedAnswer], // requested -1
      [4, { epoch: 4, endOffset: leo }], // the latest epoch: the log end offset
      [5, undefinedAnswer], // above the latest
      [100, undefinedAnswer],
      [0, { epoch: 0, endOffset: 13 }], // exact, not latest: the next epoch's start
      [1, { epoch: 0, endOffset: 13 }], // between: the floor epoch, the next higher start
      [2, { epoch: 2, endOffset: 17 }],
      [3, { epoch: 2, endOffset: 17 }],
    ];
    for (const [requested, want] of table) assert.deepEqual(cache.endOffsetFor(requested, leo), want, `epoch ${requested}`);
  });
  await withCache((cache) => {
    // Below the first epoch: the requested epoch and the first entry's start
    // (Kafka's shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch).
    cache.assignAll(entries([5, 11], [6, 12], [7, 13]));
    assert.deepEqual(cache.endOffsetFor(4, 0), { epoch: 4, endOffset: 11 });
    assert.deepEqual(cache.endOffsetFor(0, 0), { epoch: 0, endOffset: 11 });
    // An epoch that does not start at zero, asked as the latest.
    assert.deepEqual(cache.endOffsetFor(7, 14), { epoch: 7, endOffset: 14 });
  });
  await withCache((cache) => {
    cache.assign(2, 100);
    assert.deepEqual(cache.endOffsetFor(3, 100), undefinedAnswer, "an epoch not tracked, above the latest");
    assert.deepEqual(cache.endOffsetFor(2, 150), { epoch: 2, endOffset: 150 });
    assert.deepEqual(cache.endOffsetFor(1, 150), { epoch: 1, endOffset: 100 });
  });
});

test("leader epoch cache: truncateFromEnd removes entries starting at or past the end offset", async () => {
  await withCache((cache, path) => {
    cache.assignAll(entries([2, 6], [3, 8], [4, 11]));
    cache.truncateFromEnd(12);
    assert.deepEqual(cache.entries, entries([2, 6], [3, 8], [4, 11]), "all start before 12");
    cache.truncateFromEnd(-1);
    assert.deepEqual(cache.entries, entries([2, 6], [3, 8], [4, 11]), "a negative end offset changes nothing");
    cache.truncateFromEnd(11);
    assert.deepEqual(cache.entries, entries([2, 6], [3, 8]));
    cache.truncateFromEnd(9);
    assert.deepEqual(cache.entries, entries([2, 6], [3, 8]), "epoch 3 keeps offset 8");
    cache.truncateFromEnd(8);
    assert.deepEqual(cache.entries, entries([2, 6]));
    assert.deepEqual(fileEntries(path), entries([2, 6]));
    cache.truncateFromEnd(0);
    assert.deepEqual(cache.entries, []);
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n0\n");
  });
});

test("leader epoch cache: truncateFromStart drops entries wholly before the start and moves the first one up", async () => {
  const cases: [number, EpochEntry[]][] = [
    [1, entries([2, 6], [3, 8], [4, 11])], // before every entry: nothing changes
    [6, entries([2, 6], [3, 8], [4, 11])], // exactly the first start: nothing changes
    [7, entries([2, 7], [3, 8], [4, 11])],
    [8, entries([3, 8], [4, 11])], // an entry starting at the offset stays
    [9, entries([3, 9], [4, 11])],
    [11, entries([4, 11])],
    [15, entries([4, 15])],
  ];
  for (const [start, want] of cases) {
    await withCache((cache, path) => {
      cache.assignAll(entries([2, 6], [3, 8], [4, 11]));
      cache.truncateFromStart(start);
      assert.deepEqual(cache.entries, want, `truncateFromStart(${start})`);
      assert.deepEqual(fileEntries(path), want, `file after truncateFromStart(${start})`);
    });
  }
});

test("leader epoch cache: epochForOffset, previousEpoch and clear", async () => {
  await withCache((cache, path) => {
    assert.equal(cache.epochForOffset(0), null);
    cache.assignAll(entries([0, 0], [1, 4], [2, 4], [4, 10]));
    assert.deepEqual(cache.entries, entries([0, 0], [2, 4], [4, 10]), "epoch 1 at 4 never got a batch");
    const want: [number, number | null][] = [[0, 0], [3, 0], [4, 2], [9, 2], [10, 4], [1000, 4]];
    for (const [offset, epoch] of want) assert.equal(cache.epochForOffset(offset), epoch, `offset ${offset}`);
    assert.equal(cache.previousEpoch(4), 2);
    assert.equal(cache.previousEpoch(3), 2);
    assert.equal(cache.previousEpoch(0), null);
    cache.clear();
    assert.equal(cache.latestEpoch, null);
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n0\n");
  });
});

test("leader epoch cache: leader-epoch-checkpoint is Kafka's text byte for byte, atomic, and survives a new cache", async () => {
  assert.equal(formatLeaderEpochCheckpoint([]), "0\n0\n");
  assert.equal(formatLeaderEpochCheckpoint(entries([0, 0], [3, 120], [2147483647, 9007199254740000])), "0\n3\n0 0\n3 120\n2147483647 9007199254740000\n");
  await withCache((cache, path, dir) => {
    cache.assign(0, 0);
    cache.assign(3, 120);
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n2\n0 0\n3 120\n");
    assert.deepEqual(nodeFs.readdirSync(dir), [LeaderEpochCheckpointFileName], "no temp file left behind");
    const again = new LeaderEpochFileCache(new LeaderEpochCheckpointFile(platform, path), silentLogger, new LeaderEpochCheckpointFile(platform, path).read() ?? []);
    assert.deepEqual(again.entries, entries([0, 0], [3, 120]));
    assert.equal(new LeaderEpochCheckpointFile(platform, `${dir}/absent`).read(), null, "a missing file reads as null");
  });
  // What Kafka writes parses, whitespace as its reader allows.
  assert.deepEqual(parseLeaderEpochCheckpoint("0\n2\n0  0\n3\t120\n"), entries([0, 0], [3, 120]));
  for (const bad of ["", "1\n0\n", "0\n1\n", "0\n1\n0\n", "0\n1\n0 1 2\n", "0\n1\n-1 5\n", "0\n1\n1 -5\n", "0\n1\nx 5\n", "0\n1\n2147483648 0\n", "0\n2\n0 0\n", "0\n0\n1 1\n"]) {
    assert.throws(() => parseLeaderEpochCheckpoint(bad), CheckpointFormatError, JSON.stringify(bad));
  }
});
