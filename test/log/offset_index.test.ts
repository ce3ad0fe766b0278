// OffsetIndex on real files: Kafka's 8-byte big-endian (relative offset, position) entries,
// lookups (largest indexed offset <= target), the entry limit, truncation, and loading a file
// that a crash left torn (a partial entry, entries past the log's end, entries out of order).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { test } from "node:test";
import { OffsetIndex } from "../../src/log/offset_index.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";

const platform: Platform = await loadPlatform();

async function withIndexPath(fn: (path: string) => void | Promise<void>): Promise<void> {
  const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-index-"));
  try {
    await fn(`${dir}/00000000000000000100.index`);
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
}

const BIG = 1 << 30;

function entriesBytes(pairs: [number, number][]): Uint8Array {
  const out = new Uint8Array(pairs.length * 8);
  const dv = new DataView(out.buffer);
  pairs.forEach(([rel, pos], i) => {
    dv.setInt32(i * 8, rel);
    dv.setInt32(i * 8 + 4, pos);
  });
  return out;
}

test("offset index: entries are written as big-endian (offset - base, position) pairs", async () => {
  await withIndexPath((path) => {
    const idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      idx.append(104, 0);
      idx.append(110, 4096);
      idx.append(100_000, 0x01020304);
      assert.equal(idx.entryCount, 3);
      assert.equal(idx.sizeBytes, 24);
      assert.equal(idx.lastPosition, 0x01020304);
    } finally {
      idx.close();
    }
    assert.deepEqual(new Uint8Array(nodeFs.readFileSync(path)), entriesBytes([[4, 0], [10, 4096], [99_900, 0x01020304]]));
  });
});

test("offset index: lookup gives the position of the largest indexed offset <= target, 0 below the first", async () => {
  await withIndexPath((path) => {
    const idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.lookup(100), 0, "empty index");
      assert.equal(idx.lastPosition, 0);
      const entries: [number, number][] = [];
      for (let i = 0; i < 1000; i++) entries.push([100 + 3 + i * 7, 50 + i * 200]);
      for (const [o, p] of entries) idx.append(o, p);
      assert.equal(idx.lookup(0), 0, "below the base");
      assert.equal(idx.lookup(100), 0);
      assert.equal(idx.lookup(102), 0, "below the first entry");
      for (let target = 103; target < 100 + 7 * 1000 + 20; target++) {
        let expected = 0;
        for (const [o, p] of entries) if (o <= target) expected = p;
        assert.equal(idx.lookup(target), expected, `lookup(${target})`);
      }
    } finally {
      idx.close();
    }
  });
});

test("offset index: reopening loads the entries back", async () => {
  await withIndexPath((path) => {
    let idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    for (let i = 1; i <= 50; i++) idx.append(100 + i * 10, i * 1000);
    idx.flush();
    idx.close();
    idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.entryCount, 50);
      assert.equal(idx.lastPosition, 50_000);
      assert.equal(idx.lookup(255), 15_000);
      idx.append(700, 60_000);
      assert.equal(idx.lookup(10_000), 60_000);
    } finally {
      idx.close();
    }
  });
});

test("offset index: loading drops a partial last entry and entries at or past the log's size", async () => {
  await withIndexPath((path) => {
    nodeFs.writeFileSync(path, new Uint8Array([...entriesBytes([[1, 0], [5, 100], [9, 200], [12, 300]]), 0, 0, 0]));
    const idx = OffsetIndex.open(platform, path, 100, BIG, 250); // the log ends at 250
    try {
      assert.equal(idx.entryCount, 3, "the entry at 300 is past the log; the one at 200 stays");
      assert.equal(idx.lastPosition, 200);
    } finally {
      idx.close();
    }
    assert.equal(nodeFs.statSync(path).size, 24, "the file is cut to its whole, valid entries");
  });
});

test("offset index: an entry at exactly the log's size is dropped (nothing starts there yet)", async () => {
  await withIndexPath((path) => {
    nodeFs.writeFileSync(path, entriesBytes([[1, 0], [5, 100]]));
    const idx = OffsetIndex.open(platform, path, 100, BIG, 100);
    try {
      assert.equal(idx.entryCount, 1);
    } finally {
      idx.close();
    }
  });
});

test("offset index: loading stops at the first entry out of order", async () => {
  await withIndexPath((path) => {
    nodeFs.writeFileSync(path, entriesBytes([[1, 0], [5, 100], [4, 200], [9, 300]]));
    let idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.entryCount, 2, "offsets must increase");
    } finally {
      idx.close();
    }
    nodeFs.writeFileSync(path, entriesBytes([[1, 0], [5, 100], [6, 100]]));
    idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.entryCount, 2, "positions must increase");
    } finally {
      idx.close();
    }
    nodeFs.writeFileSync(path, new Uint8Array(64)); // zeros: one (0, 0) entry at most
    idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.ok(idx.entryCount <= 1);
    } finally {
      idx.close();
    }
  });
});

test("offset index: a missing file is created empty", async () => {
  await withIndexPath((path) => {
    assert.equal(nodeFs.existsSync(path), false);
    const idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.entryCount, 0);
      assert.equal(nodeFs.existsSync(path), true);
    } finally {
      idx.close();
    }
  });
});

test("offset index: full at segment.index.bytes / 8 entries; further appends are not written", async () => {
  await withIndexPath((path) => {
    const idx = OffsetIndex.open(platform, path, 100, 8 * 3 + 5, BIG);
    try {
      assert.equal(idx.maxEntries, 3);
      for (let i = 1; i <= 3; i++) {
        assert.equal(idx.isFull, false);
        idx.append(100 + i, i * 10);
      }
      assert.equal(idx.isFull, true);
      idx.append(200, 1000);
      assert.equal(idx.entryCount, 3);
      assert.equal(idx.lookup(500), 30);
    } finally {
      idx.close();
    }
    assert.equal(nodeFs.statSync(path).size, 24);
  });
});

test("offset index: truncateToPosition drops entries at or past the position, in memory and on disk", async () => {
  await withIndexPath((path) => {
    const idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      for (let i = 1; i <= 5; i++) idx.append(100 + i * 10, i * 100);
      idx.truncateToPosition(300);
      assert.equal(idx.entryCount, 2);
      assert.equal(idx.lastPosition, 200);
      assert.equal(nodeFs.statSync(path).size, 16);
      assert.equal(idx.lookup(1000), 200);
      idx.append(135, 300); // appends continue after the cut
      assert.equal(idx.lookup(1000), 300);
      idx.truncateToPosition(0);
      assert.equal(idx.entryCount, 0);
      assert.equal(idx.lookup(1000), 0);
    } finally {
      idx.close();
    }
  });
});

test("offset index: appends that do not increase are programmer errors", async () => {
  await withIndexPath((path) => {
    const idx = OffsetIndex.open(platform, path, 100, BIG, BIG);
    try {
      idx.append(110, 100);
      assert.throws(() => idx.append(110, 200), /offsets increase/);
      assert.throws(() => idx.append(120, 100), /positions increase/);
      assert.throws(() => idx.append(99, 300), /relative offset/);
      assert.equal(idx.entryCount, 1);
    } finally {
      idx.close();
    }
  });
});
