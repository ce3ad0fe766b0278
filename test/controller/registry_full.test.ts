// The controller when the embedded registry's disk is full: an event whose write is refused
// (ENOSPC on the journal) is logged at warn, not error, and read again later with a pause that
// doubles while the registry keeps refusing (1 s, 2 s, 4 s, ...); a request that needs a write
// (ElectLeaders, AlterPartitionReassignments) answers KAFKA_STORAGE_ERROR and leaves the cache as stored; once there is room the next resync does what the
// failed event could not. The store is on disk, on the faulty platform.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EmbeddedRegistryStore } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { tempDir } from "../registry/helpers.ts";
import { type HeldTimersClock, withHarness } from "./harness.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("controller at a full registry disk: failed events are warned and retried with a growing pause, ElectLeaders and AlterPartitionReassignments answer KAFKA_STORAGE_ERROR (no move listed), and the change is made once there is room", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const { dir, cleanup } = tempDir();
  const logger = recordingLogger();
  const store = EmbeddedRegistryStore.open(faulty, dir, { logger });
  try {
    await withHarness({ clock: "manual", store, logger }, async (h) => {
      const clock = h.clock as HeldTimersClock;
      await h.createTopic("t", [[1, 2], [2, 1]]);
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["write"], partialWrite: true });
      await h.killBroker(1);
      // The BrokerChange event cannot move t-0's leadership: its write is refused.
      for (let i = 0; i < 500 && !logger.lines.some((l) => /registry refused a write/.test(l.msg)); i++) await sleep(5);
      assert.ok(logger.lines.some((l) => l.level === "warn" && /registry refused a write/.test(l.msg)), "warned");
      assert.equal((await h.state("t", 0)).leader, 1, "nothing written");

      const [r] = await h.controller.electLeaders(1, [{ topic: "t", partition: 0 }]);
      assert.equal(r.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.match(r.errorMessage ?? "", /ENOSPC/);
      const [m] = await h.controller.alterPartitionReassignments([{ topic: "t", partition: 1, replicas: [2, 3] }]);
      assert.equal(m.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, "AlterPartitionReassignments");
      assert.deepEqual(h.controller.listPartitionReassignments(null), [], "no move is listed that was not stored");

      // Each resync fails too, and the next waits twice as long.
      const delays: number[] = [];
      for (let i = 0; i < 1000 && delays.length < 4; i++) {
        delays.push(...clock.fire());
        await sleep(5);
      }
      assert.deepEqual(delays.slice(0, 4), [1000, 2000, 4000, 8000]);

      lift();
      let state = await h.state("t", 0);
      for (let i = 0; i < 1000 && state.leader !== 2; i++) {
        clock.fire();
        await sleep(5);
        state = await h.state("t", 0);
      }
      assert.equal(state.leader, 2, "the resync moved the leadership once the write went through");
      assert.deepEqual(state.isr, [2]);
      assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), [], "no error-level line");
    });
  } finally {
    cleanup();
  }
});
