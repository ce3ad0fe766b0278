// platform: the only module that touches Bun.*, Deno.* or node:* I/O. types.ts is the contract;
// bun.ts and deno.ts implement it natively; loadPlatform() picks the one for the running runtime
// (only the CLI and tests call it, everything else receives a Platform).
export type * from "./types.ts";
import type { Platform } from "./types.ts";

export async function loadPlatform(): Promise<Platform> {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined) return (await import("./bun.ts")).createBunPlatform();
  if (g.Deno !== undefined) return (await import("./deno.ts")).createDenoPlatform();
  throw new Error("strand runs on Bun or Deno; this runtime is neither");
}

/**
 * A uniform integer in [0, bound) from the platform's random source (bound at most 2^32): what
 * session ids and random choices use instead of Math.random, which is neither the Platform's nor
 * unpredictable.
 */
export function randomBelow(random: { randomBytes(out: Uint8Array): void }, bound: number): number {
  const b = new Uint8Array(4);
  random.randomBytes(b);
  return Math.floor((new DataView(b.buffer).getUint32(0) / 0x1_0000_0000) * bound);
}
