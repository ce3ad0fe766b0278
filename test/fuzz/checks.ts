// What a fuzz run must show, shared by wire.test.ts and main.ts: each failed check, as a sentence.
import type { FuzzResult } from "./driver.ts";

/**
 * Ceiling on the broker's RSS during a run. Measured peaks (100,000 frames, 6 connections): see
 * the test's header comment; the bound leaves room for the runtime's own variation, and is far
 * below what an unbounded buffer (many half-sent 100 MB frames) would reach.
 */
export const rssBoundMb = 400;

export function failures(r: FuzzResult, framesWanted: number): string[] {
  const out: string[] = [];
  if (r.unexpectedExit !== null) out.push(r.unexpectedExit);
  if (r.framesDelivered < framesWanted) out.push(`only ${r.framesDelivered} of ${framesWanted} frames delivered`);
  if (r.rssPeakMb >= rssBoundMb) out.push(`broker RSS peaked at ${r.rssPeakMb} MB (bound ${rssBoundMb} MB)`);
  for (const e of r.errorLines) out.push(`error-level log line (x${e.count}, session ${e.session}): ${e.line.slice(0, 300)}`);
  for (const t of r.roundTrips) if (!t.ok) out.push(`round trip ${t.at} failed: ${t.detail}`);
  if (r.unexpectedExit === null && r.stopStatus !== 0) out.push(`SIGTERM stop ended with status ${r.stopStatus}, not 0`);
  if (r.unexpectedExit === null && r.restartOk !== true) out.push("the broker did not start and serve again on the fuzzed log dir");
  return out;
}
