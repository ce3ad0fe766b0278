// CRC32C: the word-at-a-time loop (16 bytes per step over an aligned Int32Array view) gives what
// a bit-at-a-time reference gives, at every alignment, length and split of the input.
import assert from "node:assert/strict";
import { test } from "node:test";
import { crc32c } from "../../src/util/crc32c.ts";
import { pseudoRandomBytes } from "../helpers/random.ts";

/** CRC32C one bit at a time, straight from the definition (reflected polynomial 0x82f63b78). */
function reference(data: Uint8Array, start: number, end: number): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) {
    crc ^= data[i];
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test("crc32c: equals the bitwise reference at every alignment and length around the word loop", () => {
  const backing = pseudoRandomBytes(11, 4096 + 8);
  for (const offset of [0, 1, 2, 3, 5]) {
    const data = backing.subarray(offset);
    for (const start of [0, 1, 2, 3, 7]) {
      for (const length of [0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 81, 127, 128, 129, 1000, 4000]) {
        const end = start + length;
        assert.equal(crc32c(data, start, end), reference(data, start, end), `offset ${offset} start ${start} length ${length}`);
      }
    }
  }
});

test("crc32c: continued over pieces equals the whole, whatever the split", () => {
  const data = pseudoRandomBytes(12, 3000);
  const whole = crc32c(data);
  for (const cut of [1, 3, 64, 65, 1001, 2999]) {
    assert.equal(crc32c(data, cut, data.length, crc32c(data, 0, cut)), whole, `cut at ${cut}`);
  }
  assert.equal(crc32c(new TextEncoder().encode("123456789".repeat(10))), reference(new TextEncoder().encode("123456789".repeat(10)), 0, 90));
});
