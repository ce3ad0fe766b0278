// Length-prefixed frames over a platform Connection: the reader gathers chunks and hands out whole
// frames (int32 length, then that many bytes). A length that is negative or above the bound is
// a protocol error: the peer is not a ZooKeeper server, or is out of step with us.

import type { Connection } from "../platform/mod.ts";

export class FrameError extends Error {
  override name = "FrameError";
}

export class FrameReader {
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;

  constructor(private readonly conn: Connection, private readonly frameBytesMax: number) {}

  /** The next frame's bytes (without the length), or null once the connection has ended. */
  async next(): Promise<Uint8Array | null> {
    for (;;) {
      const frame = this.take();
      if (frame !== null) return frame;
      const chunk = await this.conn.read();
      if (chunk === null) return null;
      this.append(chunk);
    }
  }

  /** A whole frame from the buffer, or null when more bytes are needed. Throws FrameError. */
  private take(): Uint8Array | null {
    const have = this.end - this.start;
    if (have < 4) return null;
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.start, 4);
    const length = view.getInt32(0);
    if (length < 0 || length > this.frameBytesMax) {
      throw new FrameError(`frame length ${length} is outside 0..${this.frameBytesMax}`);
    }
    if (have < 4 + length) return null;
    // A copy: the buffer is compacted in place by later reads.
    const frame = this.buf.slice(this.start + 4, this.start + 4 + length);
    this.start += 4 + length;
    return frame;
  }

  private append(chunk: Uint8Array): void {
    const have = this.end - this.start;
    if (this.end + chunk.length > this.buf.length) {
      // Compact, growing only when the unread bytes and the chunk do not fit.
      const size = Math.max(this.buf.length, have + chunk.length, 4096);
      const next = size > this.buf.length ? new Uint8Array(size * 2) : this.buf;
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = have;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }
}
