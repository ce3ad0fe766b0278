// Programmer errors are assertions: a failure is a bug, and the message says which invariant broke.
// Expected failures (bad input, missing topics) never use this; they become Kafka error codes.

export class AssertionError extends Error {
  override name = "AssertionError";
}

export function assert(cond: unknown, why: string): asserts cond {
  if (!cond) throw new AssertionError(`invariant broken: ${why}`);
}
