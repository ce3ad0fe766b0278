// ControlFence against a registry whose contents the test sets: a controller and epoch are taken
// only as /controller and /controller_epoch hold them (after a ZooKeeper sync when this session's
// server lags), the pair last confirmed is not read again, an older epoch is stale without a read,
// this broker is never the sender; the broker epoch must be the registration's czxid (a newer one
// only as the registry shows this session's node); an unreadable registry closes the connection.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControlFence } from "../../src/broker/control_fence.ts";
import { CloseConnection } from "../../src/broker/services.ts";
import { type Registry, RegistryError } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { refusalLogIntervalMs } from "../../src/util/limits.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";

const enc = new TextEncoder();

/** A registry showing `lagging` until sync() is called, then `current`; reads are counted. */
function registry(opts: {
  current: { controller: number; epoch: number };
  lagging?: { controller: number; epoch: number };
  czxid?: bigint;
  owner?: bigint;
  down?: boolean;
}) {
  let synced = opts.lagging === undefined;
  const log: string[] = [];
  const view = () => (synced ? opts.current : opts.lagging!);
  const r = {
    sessionId: 42n,
    getData: (path: string) => {
      log.push(`get ${path}`);
      if (opts.down) return Promise.reject(new RegistryError("ConnectionLoss", path));
      if (path === "/controller") return Promise.resolve({ data: enc.encode(`{"version":2,"brokerid":${view().controller},"timestamp":"1"}`), stat: {} });
      if (path === "/controller_epoch") return Promise.resolve({ data: enc.encode(String(view().epoch)), stat: {} });
      return Promise.reject(new RegistryError("NoNode", path));
    },
    exists: (path: string) => {
      log.push(`exists ${path}`);
      return Promise.resolve(opts.czxid === undefined ? null : { czxid: opts.czxid, ephemeralOwner: opts.owner ?? 42n });
    },
    sync: (path: string) => {
      log.push(`sync ${path}`);
      synced = true;
      return Promise.resolve();
    },
  } as unknown as Registry;
  return { r, log };
}

test("controller: the registry's pair passes (read once), others are stale, this broker never sends", async () => {
  const { r, log } = registry({ current: { controller: 2, epoch: 5 } });
  const fence = new ControlFence(r, 1, () => 100n, () => 4, () => 0);
  assert.equal(await fence.controllerRefusal(2, 5), null);
  assert.equal(await fence.controllerRefusal(2, 5), null);
  assert.deepEqual(log, ["get /controller_epoch", "get /controller"], "the confirmed pair is not read again");
  assert.match(String(await fence.controllerRefusal(2, 6)), /not the registry's/);
  assert.match(String(await fence.controllerRefusal(3, 5)), /not the registry's/);
  assert.match(String(await fence.controllerRefusal(2, 2147483647)), /not the registry's/);
  log.length = 0;
  assert.match(String(await fence.controllerRefusal(2, 3)), /older than 4/);
  assert.match(String(await fence.controllerRefusal(1, 5)), /is this broker/);
  assert.deepEqual(log, [], "stale and self refused without a read");
});

test("controller: a lagging server is synced and read again before a new controller is refused", async () => {
  const { r, log } = registry({ current: { controller: 3, epoch: 6 }, lagging: { controller: 2, epoch: 5 } });
  const fence = new ControlFence(r, 1, () => 100n, () => 5, () => 0);
  assert.equal(await fence.controllerRefusal(3, 6), null);
  assert.deepEqual(log, ["get /controller_epoch", "get /controller", "sync /controller_epoch", "get /controller_epoch", "get /controller"]);
});

test("broker epoch: exactly the registration; a newer one only as this session's node shows it; -1 never", async () => {
  const fence = new ControlFence(registry({ current: { controller: 2, epoch: 5 }, czxid: 120n }).r, 1, () => 100n, () => 0, () => 0);
  assert.equal(await fence.brokerEpochRefusal(100n), null);
  assert.match(String(await fence.brokerEpochRefusal(-1n)), /no broker epoch/);
  assert.match(String(await fence.brokerEpochRefusal(99n)), /older registration/);
  assert.equal(await fence.brokerEpochRefusal(120n), null, "re-registered: the registry shows 120");
  assert.match(String(await fence.brokerEpochRefusal(121n)), /czxid 120/);
  const other = new ControlFence(registry({ current: { controller: 2, epoch: 5 }, czxid: 120n, owner: 7n }).r, 1, () => 100n, () => 0, () => 0);
  assert.match(String(await other.brokerEpochRefusal(120n)), /not this broker's registration/, "another session's node");
  // Before this broker learnt its epoch (-1), the registration read decides.
  const starting = new ControlFence(registry({ current: { controller: 2, epoch: 5 }, czxid: 120n }).r, 1, () => -1n, () => 0, () => 0);
  assert.equal(await starting.brokerEpochRefusal(120n), null);
});

test("check(): the answer codes, and an unreadable registry closes the connection", async () => {
  const ok = new ControlFence(registry({ current: { controller: 2, epoch: 5 } }).r, 1, () => 100n, () => 0, () => 0);
  assert.equal(await ok.check("LeaderAndIsr", { controllerId: 2, controllerEpoch: 5, brokerEpoch: 100n }, silentLogger, {}), ErrorCode.NONE);
  assert.equal(await ok.check("LeaderAndIsr", { controllerId: 2, controllerEpoch: 5, brokerEpoch: -1n }, silentLogger, {}), ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(await ok.check("LeaderAndIsr", { controllerId: 2, controllerEpoch: 9, brokerEpoch: 100n }, silentLogger, {}), ErrorCode.STALE_CONTROLLER_EPOCH);
  const down = new ControlFence(registry({ current: { controller: 2, epoch: 5 }, down: true }).r, 1, () => 100n, () => 0, () => 0);
  await assert.rejects(down.check("StopReplica", { controllerId: 2, controllerEpoch: 5, brokerEpoch: 100n }, silentLogger, {}), CloseConnection);
});

test("check(): refusals logged once, then one line per refusalLogIntervalMs with the count unsaid and the latest unsaid sender", async () => {
  let nowMs = 0;
  const fence = new ControlFence(registry({ current: { controller: 2, epoch: 5 } }).r, 1, () => 100n, () => 0, () => nowMs);
  const logger = recordingLogger();
  const forged = (i: number) => fence.check("StopReplica", { controllerId: 2, controllerEpoch: 9 + i, brokerEpoch: 100n }, logger, { remote: `10.0.0.${i}:1` });
  assert.equal(await fence.check("LeaderAndIsr", { controllerId: 2, controllerEpoch: 5, brokerEpoch: -1n }, logger, { remote: "10.9.9.9:1" }), ErrorCode.STALE_BROKER_EPOCH);
  for (let i = 0; i < 50; i++) assert.equal(await forged(i), ErrorCode.STALE_CONTROLLER_EPOCH);
  const said = () => logger.lines.map((l) => [l.msg, l.fields.remote, l.fields.notSaidSinceLast, l.fields.lastNotSaidFrom]);
  assert.deepEqual(said(), [["LeaderAndIsr refused: stale broker epoch", "10.9.9.9:1", 0, null]]);
  nowMs += refusalLogIntervalMs - 1;
  assert.equal(await forged(50), ErrorCode.STALE_CONTROLLER_EPOCH);
  assert.equal(logger.lines.length, 1, "still within the interval");
  nowMs += 1;
  assert.equal(await forged(51), ErrorCode.STALE_CONTROLLER_EPOCH);
  assert.deepEqual(said().slice(1), [["StopReplica refused: not from the current controller", "10.0.0.51:1", 51, "10.0.0.50:1"]]);
});
