// FrameReader: cutting a TCP byte stream into size-prefixed frames, whatever the chunking:
// prefixes split across chunks, many frames in one chunk, a frame spread over many chunks, and
// sizes outside [request header, socket.request.max.bytes] reported before any body arrives.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameReader } from "../../src/broker/frame_reader.ts";

/** A frame (size prefix + body) whose body bytes are derived from tag. */
function makeFrame(bodyBytes: number, tag: number): { wire: Uint8Array; body: Uint8Array } {
  const wire = new Uint8Array(4 + bodyBytes);
  new DataView(wire.buffer).setInt32(0, bodyBytes);
  for (let i = 0; i < bodyBytes; i++) wire[4 + i] = (tag * 31 + i) & 0xff;
  return { wire, body: wire.slice(4) };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Splits bytes at the given cut points into fresh chunks (as the platform hands them over). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.slice(from, c));
    from = c;
  }
  return out;
}

/** Pushes chunks one by one, collecting every frame as soon as it is complete. */
function feed(reader: FrameReader, chunks: Uint8Array[]): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (const c of chunks) {
    reader.push(c);
    for (;;) {
      const f = reader.next();
      if (f === null) break;
      assert.ok(f instanceof Uint8Array, `unexpected ${f}`);
      frames.push(f.slice());
    }
  }
  return frames;
}

test("frame reader: one frame in one chunk, then nothing", () => {
  const r = new FrameReader(1 << 20);
  assert.equal(r.next(), null, "nothing buffered");
  const f = makeFrame(20, 1);
  r.push(f.wire);
  assert.deepEqual(r.next(), f.body);
  assert.equal(r.next(), null);
});

test("frame reader: many frames in one chunk come out one by one, in order", () => {
  const frames = Array.from({ length: 50 }, (_, i) => makeFrame(8 + (i * 13) % 200, i));
  const r = new FrameReader(1 << 20);
  assert.deepEqual(feed(r, [concat(frames.map((f) => f.wire))]), frames.map((f) => f.body));
  assert.equal(r.next(), null);
});

test("frame reader: a size prefix split across chunks at every point", () => {
  const f = makeFrame(300, 7);
  for (const cuts of [[1], [2], [3], [1, 2, 3], [1, 3], [2, 4], [3, 5], [4]]) {
    const r = new FrameReader(1 << 20);
    assert.deepEqual(feed(r, split(f.wire, cuts)), [f.body], `cuts ${cuts}`);
  }
});

test("frame reader: a frame spread over one-byte chunks, followed by others in the same chunks", () => {
  const frames = [makeFrame(8, 1), makeFrame(100, 2), makeFrame(9, 3)];
  const wire = concat(frames.map((f) => f.wire));
  const r = new FrameReader(1 << 20);
  const out = feed(r, split(wire, Array.from({ length: wire.length - 1 }, (_, i) => i + 1)));
  assert.deepEqual(out, frames.map((f) => f.body));
});

test("frame reader: a chunk ending mid-frame and the next holding its end and a whole frame more", () => {
  const a = makeFrame(40, 1);
  const b = makeFrame(10, 2);
  const c = makeFrame(12, 3);
  const wire = concat([a.wire, b.wire, c.wire]);
  const r = new FrameReader(1 << 20);
  assert.deepEqual(feed(r, split(wire, [30, a.wire.length + b.wire.length + 2])), [a.body, b.body, c.body]);
});

test("frame reader: frames returned earlier keep their bytes after later pushes", () => {
  const r = new FrameReader(1 << 20);
  const a = makeFrame(16, 1);
  const b = makeFrame(16, 2);
  r.push(concat([a.wire, b.wire.subarray(0, 5)]));
  const first = r.next();
  assert.ok(first instanceof Uint8Array);
  r.push(b.wire.slice(5));
  const second = r.next();
  assert.deepEqual(first, a.body);
  assert.deepEqual(second, b.body);
});

test("frame reader: empty chunks change nothing", () => {
  const r = new FrameReader(1 << 20);
  const f = makeFrame(8, 4);
  assert.deepEqual(feed(r, [new Uint8Array(0), f.wire.slice(0, 2), new Uint8Array(0), f.wire.slice(2), new Uint8Array(0)]), [f.body]);
});

test("frame reader: random chunkings of a stream of random frames give back the frames", () => {
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 50; round++) {
    const frames = Array.from({ length: 1 + rand(20) }, (_, i) => makeFrame(8 + rand(rand(2) ? 30 : 3000), round * 100 + i));
    const wire = concat(frames.map((f) => f.wire));
    const cuts = [...new Set(Array.from({ length: rand(40) }, () => 1 + rand(wire.length - 1)))].sort((x, y) => x - y);
    const r = new FrameReader(1 << 20);
    assert.deepEqual(feed(r, split(wire, cuts)), frames.map((f) => f.body), `round ${round}`);
    assert.equal(r.next(), null);
  }
});

test("frame reader: a size above the limit is reported as soon as the prefix is in, without the body", () => {
  const r = new FrameReader(1000);
  const prefix = new Uint8Array(4);
  new DataView(prefix.buffer).setInt32(0, 1001);
  r.push(prefix.slice(0, 3));
  assert.equal(r.next(), null, "three bytes of prefix: not yet known");
  r.push(prefix.slice(3));
  assert.equal(r.next(), "too-large");
  assert.equal(r.badSize, 1001);
  // Huge sizes too.
  const huge = new FrameReader(1000);
  huge.push(new Uint8Array([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
  assert.equal(huge.next(), "too-large");
  assert.equal(huge.badSize, 0x7fffffff);
});

test("frame reader: a size of exactly the limit is accepted", () => {
  const r = new FrameReader(1000);
  const f = makeFrame(1000, 9);
  assert.deepEqual(feed(r, split(f.wire, [4, 500])), [f.body]);
});

test("frame reader: sizes below a request header (0 to 7, negative) are reported too-small", () => {
  for (const size of [0, 1, 7, -1, -8, -0x80000000]) {
    const r = new FrameReader(1 << 20);
    const wire = new Uint8Array(12);
    new DataView(wire.buffer).setInt32(0, size);
    r.push(wire);
    assert.equal(r.next(), "too-small", `size ${size}`);
    assert.equal(r.badSize, size);
  }
  // After good frames, a bad one is still caught.
  const r = new FrameReader(1 << 20);
  const good = makeFrame(8, 1);
  r.push(concat([good.wire, new Uint8Array(4)]));
  assert.deepEqual(r.next(), good.body);
  assert.equal(r.next(), "too-small");
});

test("frame reader: a frame spanning chunks is assembled in one buffer; buffered and wanted say what it holds and needs", () => {
  const r = new FrameReader(1 << 20);
  const f = makeFrame(1000, 3);
  const g = makeFrame(10, 4);
  assert.equal(r.wanted, 4, "nothing yet: a prefix is wanted");
  r.push(f.wire.slice(0, 2));
  assert.equal(r.next(), null);
  assert.equal(r.wanted, 4);
  r.push(f.wire.slice(2, 300));
  assert.equal(r.next(), null);
  assert.equal(r.wanted, 1004, "the whole frame, prefix included");
  assert.equal(r.buffered, 300);
  r.push(f.wire.slice(300, 700));
  assert.equal(r.buffered, 700);
  assert.equal(r.next(), null);
  // The last chunk holds the end of this frame and all of the next.
  r.push(concat([f.wire.slice(700), g.wire]));
  assert.equal(r.buffered, 1004 + 14);
  assert.deepEqual(r.next(), f.body);
  assert.equal(r.buffered, 14);
  assert.deepEqual(r.next(), g.body);
  assert.equal(r.next(), null);
  assert.equal(r.buffered, 0);
  assert.equal(r.wanted, 4);
});
