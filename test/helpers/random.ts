// Deterministic "random" bytes for tests: the same garbage every run, so a failure replays.

/** xorshift32 from seed (0 is taken as 1): n bytes. */
export function pseudoRandomBytes(seed: number, n: number): Uint8Array {
  let x = seed >>> 0 || 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
