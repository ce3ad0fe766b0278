// FrameReader: cuts a connection's byte stream into size-prefixed request frames.
//
// Invariants: a frame within one chunk is a view into it; a frame spanning chunks is assembled in
// one buffer of its declared size, made only after the size passed the limits. Bytes of an
// assembled frame do not change between next() returning it and handled(): only then may its
// buffer go back to the FrameBufferCache, and only then is the CRC remembered for its first record
// batch (produce_crc_ahead.ts) forgotten, before any other frame can be written into the buffer.

import { assert, requestHeaderBytesMin } from "../util/mod.ts";
import { forgetBatchCrc, ProduceCrcAhead } from "../protocol/mod.ts";
import type { FrameBufferCache } from "./frame_buffers.ts";

/**
 * Accumulates chunks and yields whole frames. A frame within one chunk is a view into it; a frame
 * that spans chunks is copied, as its bytes arrive, into one buffer of its declared size (made
 * once the prefix and the first bytes past it are in, so never for a frame whose size is refused),
 * and the chunks are let go: a frame costs its own size plus one chunk, never twice its size.
 */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private queued = 0;
  /** The frame being assembled (its declared size) and how much of it has arrived. */
  private assembling: Uint8Array | null = null;
  private filled = 0;
  /** The last frame next() returned that was assembled (not a view into a chunk), until handled(). */
  private handedOut: Uint8Array | null = null;
  /** Checksums the assembling frame's first record batch as it arrives (Produce only). */
  private crcAhead: ProduceCrcAhead | null = null;
  badSize = 0;

  /**
   * buffers: where frames spanning chunks are assembled (null: a new buffer for each).
   * maxFrameBytes is raised once a SASL connection has authenticated (see serveFrames).
   */
  constructor(public maxFrameBytes: number, private readonly buffers: FrameBufferCache | null = null) {}

  /**
   * The frame next() returned last was handled. With `reusable` (nothing keeps a view of its
   * bytes) its buffer, if it was assembled in one of `buffers`, goes back for a later frame.
   */
  handled(reusable: boolean): void {
    const frame = this.handedOut;
    this.handedOut = null;
    if (frame === null) return;
    forgetBatchCrc(frame);
    if (reusable && this.buffers !== null) this.buffers.give(frame);
  }

  /** Bytes held: queued chunks and the frame being assembled (its prefix included). */
  get buffered(): number {
    return this.queued + (this.assembling === null ? 0 : 4 + this.filled);
  }

  /**
   * Bytes the frame being read takes whole, prefix included (4 while the prefix is incomplete):
   * what a connection reserves before reading more. Call after next() returned null.
   */
  get wanted(): number {
    if (this.assembling !== null) return 4 + this.assembling.length;
    if (this.queued < 4) return 4;
    return 4 + this.peekSize();
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const frame = this.assembling;
    if (frame !== null && this.filled < frame.length) {
      const k = Math.min(chunk.length, frame.length - this.filled);
      frame.set(chunk.subarray(0, k), this.filled);
      this.filled += k;
      this.crcAhead?.advance(frame, this.filled);
      if (k === chunk.length) return;
      chunk = chunk.subarray(k);
    }
    this.chunks.push(chunk);
    this.queued += chunk.length;
  }

  next(): Uint8Array | null | "too-large" | "too-small" {
    const frame = this.assembling;
    if (frame !== null) {
      if (this.filled < frame.length) return null;
      this.assembling = null;
      this.crcAhead?.complete(frame);
      this.crcAhead = null;
      this.handedOut = frame;
      return frame;
    }
    if (this.queued < 4) return null;
    const size = this.peekSize();
    if (size > this.maxFrameBytes) return (this.badSize = size), "too-large";
    if (size < requestHeaderBytesMin) return (this.badSize = size), "too-small";
    if (this.queued >= 4 + size) return this.take(4 + size).subarray(4);
    if (this.chunks[0].length >= 4 + size || this.queued === 4) return null;
    // The frame spans chunks: assemble it in its own buffer from here on.
    this.take(4);
    this.assembling = this.buffers === null ? new Uint8Array(size) : this.buffers.take(size);
    this.filled = 0;
    this.crcAhead = new ProduceCrcAhead();
    const parts = this.chunks;
    this.chunks = [];
    this.queued = 0;
    for (const c of parts) this.push(c);
    return null;
  }

  private peekSize(): number {
    const head = this.chunks[0].length >= 4 ? this.chunks[0] : this.concat(4);
    return new DataView(head.buffer, head.byteOffset, 4).getInt32(0);
  }

  /** The first n queued bytes as one array (copied only when they span chunks). */
  private concat(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of this.chunks) {
      const k = Math.min(c.length, n - o);
      out.set(c.subarray(0, k), o);
      o += k;
      if (o === n) break;
    }
    return out;
  }

  private take(n: number): Uint8Array {
    assert(n <= this.queued, "take within queued bytes");
    const first = this.chunks[0];
    let out: Uint8Array;
    if (first.length >= n) out = first.subarray(0, n);
    else out = this.concat(n);
    // Drop n bytes from the front.
    let left = n;
    while (left > 0) {
      const c = this.chunks[0];
      if (c.length <= left) {
        this.chunks.shift();
        left -= c.length;
      } else {
        this.chunks[0] = c.subarray(left);
        left = 0;
      }
    }
    this.queued -= n;
    return out;
  }
}
