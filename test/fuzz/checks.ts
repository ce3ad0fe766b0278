// What a fuzz run must show, shared by wire.test.ts and main.ts: each failed check, as a sentence.
import type { FuzzResult } from "./driver.ts";

/**
 * Ceiling on the broker's RSS during a run. Peaks measured with 100,000 frames and 8 connections
 * on a loaded 2-core machine (before issue 11's fixes): Bun 111-141 MB (288 MB once, in a run with
 * five times today's share of gzip bombs), Deno 197-206 MB, from 65-70 MB at start. The bound
 * leaves room for the runtimes' own variation and stays far below what unbounded buffering (the
 * issue's ten half-sent 60 MB frames: 709 MB) reaches.
 */
export const rssBoundMb = 400;

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
