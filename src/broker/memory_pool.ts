// MemoryPool: Kafka's queued.max.request.bytes, the bytes of requests being read and handled,
// across every connection. A connection reserves the whole frame it is reading (size prefix
// included) once the prefix says how large it is, before it reads the frame's bytes; when the
// pool cannot give them, the connection is not read (the runtime pauses the socket and TCP pushes
// back on the peer) until bytes are released, as Kafka mutes a channel whose receive cannot get
// its buffer. The bytes go back once the request has been handled.
//
// Invariants:
// - reserved <= capacity, except for forced bytes (a chunk that ran past the frame it was read
//   for), at most one read's worth per connection.
// - A frame is reserved whole or not at all, so a waiting connection holds nothing it needs more
//   of: with capacity >= socket.request.max.bytes, any single frame is admitted as soon as the
//   reservations of the others are released (handled, or their connection closed: a peer that
//   stops mid-frame holds its reservation until connections.max.idle.ms closes it).
// - Waiters are granted in arrival order at each release; a reservation that fits what is free
//   passes a larger one that does not, so small requests keep flowing while a large frame waits.
//   (The large one may wait as long as smaller ones keep the pool too full for it.)

import { assert } from "../util/mod.ts";

interface Waiter {
  bytes: number;
  grant: (granted: boolean) => void;
}

export class MemoryPool {
  private reservedBytes = 0;
  private readonly waiters: Waiter[] = [];

  /** capacity: Infinity for an unbounded pool (queued.max.request.bytes <= 0, Kafka's default). */
  constructor(readonly capacity: number) {
    assert(capacity > 0, "a memory pool has room");
  }

  get reserved(): number {
    return this.reservedBytes;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Reserves bytes now when they fit; false (nothing reserved) when they do not. */
  tryReserve(bytes: number): boolean {
    if (this.reservedBytes + bytes > this.capacity) return false;
    this.reservedBytes += bytes;
    return true;
  }

  /**
   * Reserves bytes, waiting for them when they do not fit now. Resolves true once reserved, false
   * when cancelled first (see the returned cancel).
   */
  reserve(bytes: number): { granted: Promise<boolean>; cancel(): void } {
    assert(bytes <= this.capacity, "a reservation fits the pool");
    if (this.tryReserve(bytes)) return { granted: Promise.resolve(true), cancel() {} };
    let waiter!: Waiter;
    const granted = new Promise<boolean>((resolve) => (waiter = { bytes, grant: resolve }));
    this.waiters.push(waiter);
    return {
      granted,
      cancel: () => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        waiter.grant(false);
      },
    };
  }

  /** Takes bytes already received (a chunk past the frame it was read for), even over capacity. */
  force(bytes: number): void {
    this.reservedBytes += bytes;
  }

  release(bytes: number): void {
    assert(bytes >= 0 && bytes <= this.reservedBytes, "release what was reserved");
    this.reservedBytes -= bytes;
    for (let i = 0; i < this.waiters.length;) {
      const w = this.waiters[i];
      if (!this.tryReserve(w.bytes)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      w.grant(true);
    }
  }
}
