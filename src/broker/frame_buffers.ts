// FrameBufferCache: the buffers that request frames spanning several reads are assembled in, kept
// for the next such frame instead of allocated new for each. A Produce request of about 1 MB (what
// clients send under load) spans reads, and a new megabyte per request is costly where fresh
// memory is (page faults on every page, the allocator handing memory back between requests, a
// VM balloon reclaiming freed pages): measured on the produce bench, assembling into new buffers
// took more broker CPU than validating every record, and reuse made it negligible.
//
// A buffer comes back (give) only once its frame was handled and only when the caller knows no
// view of the frame's bytes outlives the request (see SocketServer: Produce only). Buffers are
// power-of-two sizes from frameBufferBytesMin to frameBufferReuseBytesMax (a larger frame gets
// its own buffer, never kept), and the idle ones hold at most frameBuffersIdleBytesMax across all
// connections; the bytes of a frame being read or handled are counted by the MemoryPool as before
// (a buffer's slack past its frame is not: less than the frame itself and under 1 MiB, since
// sizes are powers of two up to frameBufferReuseBytesMax; the large frames a pool bounds against
// get buffers of their exact size).

import { assert, frameBufferReuseBytesMax, frameBuffersIdleBytesMax } from "../util/mod.ts";

/** Smallest buffer kept: frames below it fit one read of every runtime and are views, not copies. */
const frameBufferBytesMin = 64 * 1024;

export class FrameBufferCache {
  /** Idle buffers by size. */
  private readonly idle = new Map<number, Uint8Array[]>();
  private idleBytes = 0;

  constructor(private readonly idleBytesMax = frameBuffersIdleBytesMax, private readonly reuseBytesMax = frameBufferReuseBytesMax) {}

  /** Bytes held by idle buffers (for tests and metrics). */
  get idleByteCount(): number {
    return this.idleBytes;
  }

  /** A zero-offset view of `size` bytes over a buffer that give() may take back later. */
  take(size: number): Uint8Array {
    if (size > this.reuseBytesMax) return new Uint8Array(size);
    const bytes = bufferBytesFor(size);
    const buf = this.idle.get(bytes)?.pop();
    if (buf === undefined) return new Uint8Array(bytes).subarray(0, size);
    this.idleBytes -= bytes;
    return buf.subarray(0, size);
  }

  /** Takes back the buffer under a frame from take(), unless it is too large or the cache is full. */
  give(frame: Uint8Array): void {
    const bytes = frame.buffer.byteLength;
    if (bytes > this.reuseBytesMax || bytes !== bufferBytesFor(bytes) || this.idleBytes + bytes > this.idleBytesMax) return;
    assert(frame.byteOffset === 0, "a frame buffer comes back whole");
    const list = this.idle.get(bytes);
    if (list === undefined) this.idle.set(bytes, [new Uint8Array(frame.buffer)]);
    else list.push(new Uint8Array(frame.buffer));
    this.idleBytes += bytes;
  }
}

/** Power of two at least size, and at least frameBufferBytesMin. */
function bufferBytesFor(size: number): number {
  let bytes = frameBufferBytesMin;
  while (bytes < size) bytes *= 2;
  return bytes;
}
