// Refusals of forged requests, logged without letting a flood fill the log: the first of a kind
// is said at once, then at most one line per refusalLogIntervalMs, carrying how many went unsaid
// since the last line (notSaidSinceLast) and the latest of their senders (lastNotSaidFrom), as well
// as the sender of the one it says. Kept per
// logger (one per broker) and kind, so one kind's flood does not hide another's first line.
import { type Logger, refusalLogIntervalMs } from "../util/mod.ts";

const said = new WeakMap<Logger, Map<string, { lastMs: number; notSaid: number; lastFrom: string | null }>>();

/** The fields a refusal line carries about those not said before it. */
export interface NotSaid {
  notSaidSinceLast: number;
  /** The sender ("host:port") of the latest refusal not said; null when none. */
  lastNotSaidFrom: string | null;
}

/** Calls `say(...)` when this refusal (from `sender`) is to be logged; otherwise only counts it. */
export function logRefusal(logger: Logger, kind: string, monotonicMs: number, sender: string, say: (notSaid: NotSaid) => void): void {
  let kinds = said.get(logger);
  if (kinds === undefined) said.set(logger, kinds = new Map());
  const last = kinds.get(kind);
  if (last !== undefined && monotonicMs - last.lastMs < refusalLogIntervalMs) {
    last.notSaid++;
    last.lastFrom = sender;
    return;
  }
  kinds.set(kind, { lastMs: monotonicMs, notSaid: 0, lastFrom: null });
  say({ notSaidSinceLast: last?.notSaid ?? 0, lastNotSaidFrom: last?.lastFrom ?? null });
}
