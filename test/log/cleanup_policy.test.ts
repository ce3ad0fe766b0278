// cleanup.policy is read one way everywhere (retention, the cleaner, DeleteRecords, produce
// validation): log_config.hasCleanupPolicy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { hasCleanupPolicy } from "../../src/log/mod.ts";

test("cleanup.policy: each listed policy is found whatever the spacing and case; unset is Kafka's default, delete", () => {
  const cases: [string | undefined, boolean, boolean][] = [
    ["delete", true, false],
    ["compact", false, true],
    ["compact,delete", true, true],
    [" Compact , DELETE ", true, true],
    ["compactish", false, false],
    [undefined, true, false],
  ];
  for (const [value, del, compact] of cases) {
    assert.deepEqual([hasCleanupPolicy(value, "delete"), hasCleanupPolicy(value, "compact")], [del, compact], String(value));
  }
});
