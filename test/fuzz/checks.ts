// What a fuzz run must show, shared by wire.test.ts and main.ts: each failed check, as a sentence.
import type { FuzzResult } from "./driver.ts";

/**
 * Ceiling on the broker's RSS during a run. What the broker may hold by its own bounds: its start
 * (65-70 MB), the frames being read (queued.max.request.bytes, 200 MiB by default; the fuzzer's
 * large partial frames take part of it), and a compressed batch inflating up to
 * decompressedBytesMax (64 MiB), with the previous one possibly not yet collected. Peaks measured
 * with 100,000 frames and 8 connections on a loaded 2-core machine, after issue 11's fixes
 * (every compressed batch is inflated to be validated, bombs included): Bun 203-334 MB, Deno
 * 234 MB. The bound leaves room for the runtimes' collectors and stays far below what unbounded
 * buffering reached (the ten half-sent 60 MB frames: 709 MB).
 */
export const rssBoundMb = 512;

export function failures(r: FuzzResult, framesWanted: number): string[] {
  const out: string[] = [];
  if (r.unexpectedExit !== null) out.push(r.unexpectedExit);
  if (r.framesDelivered < framesWanted) out.push(`only ${r.framesDelivered} of ${framesWanted} frames delivered`);
  if (r.rssPeakMb >= rssBoundMb) out.push(`broker RSS peaked at ${r.rssPeakMb} MB (bound ${rssBoundMb} MB)`);
  for (const e of r.errorLines) out.push(`error-level log line (x${e.count}, session ${e.session}): ${e.line.slice(0, 300)}`);
  for (const t of r.roundTrips) if (!t.ok) out.push(`round trip ${t.at} failed: ${t.detail}`);
  if (r.probeAfterControl !== null) out.push(`a fresh connection after the control phase: ${r.probeAfterControl}`);
  if (r.unexpectedExit === null && r.stopStatus !== 0) out.push(`SIGTERM stop ended with status ${r.stopStatus}, not 0`);
  if (r.unexpectedExit === null && r.restartOk !== true) out.push("the broker did not start and serve again on the fuzzed log dir");
  return out;
}
