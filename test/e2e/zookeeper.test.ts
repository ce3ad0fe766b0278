// strand on a real ZooKeeper 3.8 (Debian package zookeeper), end to end: a broker started with
// zookeeper.connect=127.0.0.1:<port>/<chroot> registers /brokers/ids/<id> with Kafka's JSON, keeps
// topics and partition state in Kafka's layout (read back with our client and with zkCli.sh), a
// second broker with the same broker.id refuses to start, kcat round-trips through it, the
// registration comes back after a session expiry, and the CLI reports an unreachable ensemble.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { BrokerStartupError } from "../../src/broker/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { RegistryError, type ZooKeeperRegistry } from "../../src/registry/mod.ts";
import { type ZkSessionEvent, ZooKeeperClient } from "../../src/zk/mod.ts";
import { startBroker, type TestBroker, tempDir } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper, sleep, startZooKeeper } from "../helpers/zookeeper.ts";

const skip = skipUnlessZooKeeper();
const kcatSkip = skip || skipUnless("kcat");
const zk = sharedZooKeeper();
const root = new URL("../../", import.meta.url).pathname;
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
let chroots = 0;

function chroot(label: string): string {
  return `/${label}-${process.pid}-${++chroots}`;
}

/** A client under the broker's chroot, to read what it wrote. */
async function reader(chrootPath: string): Promise<ZooKeeperClient> {
  const server = await zk.get();
  return await ZooKeeperClient.connect(await loadPlatform(), {
    connectString: server.connectString + chrootPath,
    sessionTimeoutMs: 4_000,
  });
}

async function json(c: ZooKeeperClient, path: string): Promise<Record<string, unknown>> {
  return JSON.parse(dec((await c.getData(path)).data));
}

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

function brokerRegistry(b: TestBroker): ZooKeeperRegistry {
  return b.broker.services.registry as ZooKeeperRegistry;
}

async function zkBroker(chrootPath: string, extra: Record<string, string> = {}): Promise<TestBroker> {
  const server = await zk.get();
  // A test that names its own log dir owns it: no unused default dir is made (and left behind).
  return await startBroker({
    "zookeeper.connect": server.connectString + chrootPath,
    "zookeeper.session.timeout.ms": "4000",
    ...extra,
  }, extra["log.dirs"] ?? tempDir());
}

/** zkCli.sh as an operator runs it; falls back to its main class when the script cannot log. */
async function zkCli(port: number, ...command: string[]): Promise<string> {
  const r = await run("/usr/share/zookeeper/bin/zkCli.sh", ["-server", `127.0.0.1:${port}`, ...command], { timeoutMs: 60_000 });
  return r.stdout.toString() + r.stderr;
}

test("zookeeper e2e: a broker registers /brokers/ids/<id> and Kafka's tree under the chroot", { skip }, async () => {
  const path = chroot("strand");
  const b = await zkBroker(path);
  const c = await reader(path);
  try {
    assert.deepEqual((await c.getChildren("/brokers/ids")).children, ["0"]);
    const reg = await c.getData("/brokers/ids/0");
    assert.equal(reg.stat.ephemeralOwner, brokerRegistry(b).sessionId, "ephemeral, the broker's session's");
    const js = JSON.parse(dec(reg.data));
    assert.deepEqual(Object.keys(js).sort(), [
      "endpoints",
      "features",
      "host",
      "jmx_port",
      "listener_security_protocol_map",
      "port",
      "timestamp",
      "version",
    ]);
    assert.equal(js.version, 5);
    assert.equal(js.host, "127.0.0.1");
    assert.equal(js.port, b.port);
    assert.deepEqual(js.endpoints, [`PLAINTEXT://127.0.0.1:${b.port}`]);
    assert.deepEqual(js.listener_security_protocol_map, { PLAINTEXT: "PLAINTEXT" });
    assert.equal(js.jmx_port, -1);
    assert.match(js.timestamp, /^\d{13}$/);
    for (const p of ["/consumers", "/brokers/topics", "/brokers/seqid", "/config/changes", "/config/topics", "/admin/delete_topics", "/isr_change_notification"]) {
      assert.notEqual(await c.exists(p), null, p);
    }
    const cluster = await json(c, "/cluster/id");
    assert.equal(cluster.version, "1");
    assert.equal(cluster.id, b.broker.clusterId);
    await until(async () => (await c.exists("/controller")) !== null, "/controller");
    const controller = await json(c, "/controller");
    assert.equal(controller.brokerid, 0);
    assert.equal(controller.version, 2);
    assert.equal((await c.exists("/controller"))!.ephemeralOwner, brokerRegistry(b).sessionId);

    const wire = await WireClient.connect(b.port);
    try {
      assert.deepEqual(await createTopic(wire, "zk-topic", { numPartitions: 2 }), { errorCode: 0, errorMessage: null });
    } finally {
      wire.close();
    }
    const topic = await json(c, "/brokers/topics/zk-topic");
    assert.equal(topic.version, 3);
    assert.deepEqual(topic.partitions, { "0": [0], "1": [0] });
    assert.deepEqual(topic.adding_replicas, {});
    assert.deepEqual(topic.removing_replicas, {});
    assert.match(topic.topic_id as string, /^[A-Za-z0-9_-]{22}$/);
    await until(async () => (await c.exists("/brokers/topics/zk-topic/partitions/1/state")) !== null, "partition state");
    assert.deepEqual(await json(c, "/brokers/topics/zk-topic/partitions/0/state"), {
      controller_epoch: (await json(c, "/controller_epoch")) as unknown as number,
      leader: 0,
      version: 1,
      leader_epoch: 0,
      isr: [0],
    });

    // What an operator sees with ZooKeeper's own shell.
    const server = await zk.get();
    assert.match(await zkCli(server.port, "ls", `${path}/brokers/ids`), /^\[0\]$/m);
    const got = await zkCli(server.port, "get", `${path}/brokers/topics/zk-topic`);
    assert.match(got, /"partitions":\{"0":\[0\],"1":\[0\]\}/);
    assert.match(await zkCli(server.port, "get", `${path}/brokers/topics/zk-topic/partitions/0/state`), /"leader":0,"version":1,"leader_epoch":0,"isr":\[0\]/);
  } finally {
    await c.close();
    await b.stop();
  }
  // A clean stop removes the registration at once (the session ends).
  const after = await reader(path);
  assert.deepEqual((await after.getChildren("/brokers/ids")).children, []);
  await after.close();
});

test("zookeeper e2e: a second broker with a broker.id a live broker holds refuses to start, clearly", { skip }, async () => {
  const path = chroot("dup");
  const first = await zkBroker(path);
  const logDir = tempDir();
  try {
    await assert.rejects(zkBroker(path, { "log.dirs": logDir }), (e: unknown) => {
      assert.ok(e instanceof BrokerStartupError, String(e));
      assert.match(e.message, /broker\.id 0 is already registered at \/brokers\/ids\/0 by a live broker/);
      assert.match(e.message, /session 0x[0-9a-f]+/);
      return true;
    });
    const c = await reader(path);
    assert.equal((await c.exists("/brokers/ids/0"))!.ephemeralOwner, brokerRegistry(first).sessionId, "untouched");
    await c.close();
    const otherDir = tempDir(); // the refused broker's dir now says broker.id=0 in meta.properties
    const other = await zkBroker(path, { "log.dirs": otherDir, "broker.id": "1" });
    const c2 = await reader(path);
    assert.deepEqual((await c2.getChildren("/brokers/ids")).children.sort(), ["0", "1"]);
    await c2.close();
    await other.stop(); // removes otherDir
  } finally {
    await first.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
  // Once the first is gone, the id is free.
  const again = await zkBroker(path);
  await again.stop();
});

test("zookeeper e2e: kcat round-trips through a broker coordinated by ZooKeeper", { skip: kcatSkip }, async () => {
  const b = await zkBroker(chroot("kcat"));
  try {
    const lines = Array.from({ length: 2_000 }, (_, i) => `zk-line-${i}`).join("\n") + "\n";
    const p = await run("kcat", ["-b", b.bootstrap, "-P", "-t", "through-zk", "-X", "acks=all"], { input: lines, timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr);
    const c = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "through-zk", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString(), lines);
  } finally {
    await b.stop();
  }
});

test("zookeeper e2e: ZooKeeper down past the session timeout: the broker waits and keeps its session, registration and controllership (as Kafka)", { skip }, async () => {
  const path = chroot("expiry");
  const server = await zk.get();
  const b = await zkBroker(path, { "zookeeper.session.timeout.ms": "4000" });
  const registry = brokerRegistry(b);
  const states: ZkSessionEvent[] = [];
  registry.zooKeeper.onStateChange((s) => states.push(s));
  const oldSession = registry.sessionId;
  try {
    await server.kill();
    await until(() => states.some((s) => s.state === "disconnected"), "disconnected", 10_000);
    // Past the session timeout without a server: the client waits (the server decides), so
    // nothing expires here. A restarted server renews the sessions it had.
    await sleep(5_500);
    assert.deepEqual(states.filter((s) => s.state === "expired"), []);
    await server.launch();
    await server.waitServing();
    await until(() => registry.zooKeeper.isConnected, "reconnected", 30_000);
    assert.equal(registry.sessionId, oldSession, "the same session");
    assert.ok(!states.some((s) => s.state === "expired"));
    const c = await reader(path);
    try {
      assert.equal((await c.exists("/brokers/ids/0"))?.ephemeralOwner, oldSession, "the registration stays");
      assert.equal((await c.exists("/controller"))?.ephemeralOwner, oldSession, "the controllership stays");
      // Still serving, metadata and all.
      const wire = await WireClient.connect(b.port);
      try {
        assert.deepEqual(await createTopic(wire, "after-expiry"), { errorCode: 0, errorMessage: null });
      } finally {
        wire.close();
      }
      assert.notEqual(await c.exists("/brokers/topics/after-expiry"), null);
    } finally {
      await c.close();
    }
  } finally {
    await b.stop();
  }
});

test("zookeeper e2e: ZooKeeper restarted within the session timeout: the registration stays, same session", { skip }, async () => {
  const path = chroot("restart");
  // A server of its own with a long tick: its largest session timeout (20 ticks, 60 s) leaves room
  // for a JVM restart on a loaded machine, which 4 s, and in CI once even 20 s, did not.
  const server = await startZooKeeper({ tickTimeMs: 3000 });
  let b: TestBroker | null = null;
  try {
    b = await startBroker({ "zookeeper.connect": server.connectString + path, "zookeeper.session.timeout.ms": "60000" });
    const registry = brokerRegistry(b);
    const id = registry.sessionId;
    await server.restart();
    await server.waitServing();
    await until(() => registry.zooKeeper.isConnected, "reconnected", 60_000);
    assert.equal(registry.sessionId, id);
    const c = await ZooKeeperClient.connect(await loadPlatform(), {
      connectString: server.connectString + path,
      sessionTimeoutMs: 4_000,
    });
    try {
      assert.equal((await c.exists("/brokers/ids/0"))!.ephemeralOwner, id);
    } finally {
      await c.close();
    }
  } finally {
    await b?.stop();
    await server.destroy();
  }
});

/** The CLI on the runtime running this test. */
function isDeno(): boolean {
  return typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
}

function cliArgs(args: string[]): [string, string[]] {
  const main = `${root}src/cli/main.ts`;
  return [process.execPath, isDeno() ? ["run", "-A", main, ...args] : [main, ...args]];
}

test("zookeeper e2e: the CLI waits zookeeper.connection.timeout.ms for an unreachable ensemble, then exits 1 clearly", { skip }, async () => {
  const dir = tempDir();
  try {
    const started = Date.now();
    const [cmd, args] = cliArgs([
      "serve",
      "--override", "zookeeper.connect=127.0.0.1:1,127.0.0.1:2/strand",
      "--override", "zookeeper.connection.timeout.ms=1500",
      "--override", `log.dirs=${dir}`,
      "--override", "listeners=PLAINTEXT://127.0.0.1:0",
    "--override", "admin.listeners=",
      "--log-level", "error",
    ]);
    const r = await run(cmd, args, { timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /strand: cannot use ZooKeeper at zookeeper\.connect=127\.0\.0\.1:1,127\.0\.0\.1:2\/strand/);
    assert.match(r.stderr, /within 1500 ms/);
    assert.ok(Date.now() - started >= 1_500);
    const [cmd2, args2] = cliArgs(["serve", "--override", "zookeeper.connect=zk1:2181,,zk2", "--override", `log.dirs=${dir}`, "--override", "admin.listeners="]);
    const bad = await run(cmd2, args2, { timeoutMs: 60_000 });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid value for zookeeper\.connect/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("zookeeper e2e: the CLI serves on ZooKeeper and SIGTERM ends its session", { skip }, async () => {
  const server = await zk.get();
  const path = chroot("cli");
  const dir = tempDir();
  const [cmd, args] = cliArgs([
    "serve",
    "--override", `zookeeper.connect=${server.connectString}${path}`,
    "--override", `log.dirs=${dir}`,
    "--override", "listeners=PLAINTEXT://127.0.0.1:0",
    "--override", "admin.listeners=",
    "--override", "broker.id=7",
    "--log-level", "warn",
  ]);
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const c = await reader("");
  try {
    await until(async () => (await c.exists(`${path}/brokers/ids/7`)) !== null, `registration; output: ${output}`, 60_000);
    // The controller is elected last in start-up; the signal handlers go in right after.
    await until(async () => (await c.exists(`${path}/controller`)) !== null, "controller", 30_000);
    await sleep(500);
    child.kill("SIGTERM");
    const code = await exited;
    // Deno's node:child_process reports a child it sent SIGTERM to as killed (code null) even
    // when the child handled the signal and exited 0 by itself (bash sees 0).
    assert.ok(code === 0 || (isDeno() && code === null), `exit code ${code}; output: ${output}`);
    // Gone at once, not after the session timeout: the CLI closed its session on the way out.
    assert.deepEqual((await c.getChildren(`${path}/brokers/ids`)).children, []);
  } finally {
    child.kill("SIGKILL");
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("zookeeper e2e: a dead ensemble fails start-up with a RegistryError (the test helper's path)", { skip }, async () => {
  const dir = tempDir();
  try {
    await assert.rejects(
      startBroker({ "zookeeper.connect": "127.0.0.1:1", "zookeeper.connection.timeout.ms": "1000" }, dir),
      (e: unknown) => e instanceof RegistryError && e.code === "ConnectionLoss",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("zookeeper e2e: stop the shared ZooKeeper", async () => {
  await zk.stop();
});
