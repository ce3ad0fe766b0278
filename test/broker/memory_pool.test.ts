// MemoryPool (queued.max.request.bytes): reservations are whole or nothing, waiters are granted
// at releases in arrival order, a small reservation that fits passes a large one that waits, a
// cancelled waiter gets nothing, and forced bytes (a read past a frame) go over capacity.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryPool } from "../../src/broker/memory_pool.ts";

test("memory pool: whole or nothing, and a release grants waiters in order", async () => {
  const pool = new MemoryPool(100);
  assert.equal(pool.tryReserve(60), true);
  assert.equal(pool.tryReserve(60), false, "60 more do not fit");
  assert.equal(pool.reserved, 60, "a refused reservation takes nothing");
  const order: string[] = [];
  const a = pool.reserve(70);
  const b = pool.reserve(50);
  void a.granted.then((g) => order.push(`a ${g}`));
  void b.granted.then((g) => order.push(`b ${g}`));
  assert.equal(pool.waiting, 2);
  // b (50) does not fit either (40 free). A small one that fits passes them both.
  assert.equal(pool.tryReserve(40), true);
  pool.release(40);
  await Promise.resolve();
  pool.release(60); // 100 free: a (70) first, then b (50) does not fit in the 30 left
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(order, ["a true"]);
  assert.equal(pool.reserved, 70);
  pool.release(70);
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(order, ["a true", "b true"]);
  assert.equal(pool.reserved, 50);
});

test("memory pool: a cancelled waiter gets nothing and holds nothing", async () => {
  const pool = new MemoryPool(10);
  assert.equal(pool.tryReserve(10), true);
  const w = pool.reserve(5);
  w.cancel();
  assert.equal(await w.granted, false);
  pool.release(10);
  assert.equal(pool.reserved, 0);
  assert.equal(pool.waiting, 0);
});

test("memory pool: forced bytes go over capacity and hold waiters back until released", async () => {
  const pool = new MemoryPool(10);
  pool.force(12);
  assert.equal(pool.reserved, 12);
  assert.equal(pool.tryReserve(1), false);
  const w = pool.reserve(10);
  let granted = false;
  void w.granted.then((g) => (granted = g));
  pool.release(2);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(granted, false);
  pool.release(10);
  assert.equal(await w.granted, true);
  assert.equal(pool.reserved, 10);
  assert.throws(() => pool.release(11), /release what was reserved/);
  assert.throws(() => pool.reserve(11), /fits the pool/);
});
