// kill -9 of a real broker process during a steady produce with acks=1 (issue 3's acceptance):
// after a restart on the same log dir, every acknowledged offset is readable with the same bytes.
// The broker runs as a child process of the runtime running the test (`bun src/cli/main.ts` under
// Bun, `deno run -A src/cli/main.ts` under Deno), with small segments and a short checkpoint
// interval, so the crash leaves several segments, a recovery point inside the log, and an active
// segment that recovery must scan. Producers on three connections record each acknowledged batch
// (partition, base offset, bytes); the check compares the stored batches byte for byte, except the
// base offset and partition leader epoch, which the broker assigns.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import process from "node:process";
import { join } from "node:path";
import { test } from "node:test";
import { tempDir } from "../helpers/broker.ts";
import { buildBatch, parseBatches } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const root = new URL("../../", import.meta.url).pathname;
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const command: [string, string[]] = g.Bun !== undefined
  ? [join(root, "node_modules/.bin/bun"), ["src/cli/main.ts", "serve"]]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", "src/cli/main.ts", "serve"]];

/**
 * Sends a signal by pid. (Deno's ChildProcess.kill() reports the exit as killed by the signal it
 * sent even when the child handled it and exited 0; a plain kill(2) reports what happened.)
 */
function signal(b: RunningBroker, sig: "SIGKILL" | "SIGTERM"): void {
  process.kill(b.proc.pid!, sig);
}

interface RunningBroker {
  proc: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `strand serve` on dir and resolves once its "broker started" line names the port. */
function spawnBroker(dir: string): Promise<RunningBroker> {
  const overrides = {
    "broker.id": "0",
    "log.dirs": dir,
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "admin.listeners": "http://127.0.0.1:0", // not the default 9644: tests run side by side
    "num.partitions": "3",
    "log.segment.bytes": "65536",
    "log.flush.interval.messages": "400",
    "log.flush.offset.checkpoint.interval.ms": "100",
    "log.retention.ms": "-1",
  };
  const args = [...command[1], ...Object.entries(overrides).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
  const proc = spawn(command[0], args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start in 60 s:\n${out.slice(-4000)}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"ports":\[(\d+)\][^\n]*"msg":"broker started"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]), output: () => out, exited });
      }
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onData);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited with ${code} before starting:\n${out.slice(-4000)}`));
    });
  });
}

interface Acked {
  partition: number;
  baseOffset: number;
  bytes: Uint8Array;
}

/** Produces batches of 1-5 records to one partition until stopped; records every acknowledgement. */
async function produceSteadily(port: number, partition: number, acked: Acked[], stop: { now: boolean }): Promise<void> {
  const c = await WireClient.connect(port);
  try {
    for (let seq = 0; !stop.now; seq++) {
      const n = 1 + (seq % 5);
      const records = Array.from({ length: n }, (_, i) => ({ key: `p${partition}`, value: `p${partition}-s${seq}-r${i}-`.padEnd(40 + ((seq * 37 + i * 101) % 900), "abcdefgh") }));
      const bytes = buildBatch(records);
      let r;
      try {
        r = await produce(c, "crash", partition, bytes, 1);
      } catch {
        return; // the broker died with this request in flight: not acknowledged
      }
      assert.equal(r.errorCode, 0, `produce: ${r.errorMessage}`);
      acked.push({ partition, baseOffset: Number(r.baseOffset), bytes });
    }
  } finally {
    c.close();
  }
}

/** Every batch of a partition, from offset 0 up to its high watermark. */
async function readAll(c: WireClient, partition: number): Promise<Map<number, Uint8Array>> {
  const out = new Map<number, Uint8Array>();
  for (let offset = 0n; ;) {
    const r = await fetchOnce(c, "crash", partition, offset, { maxBytes: 1 << 20, partitionMaxBytes: 1 << 20 });
    assert.equal(r.errorCode, 0, `fetch ${partition}@${offset}`);
    const records = r.records ?? new Uint8Array(0);
    if (records.length === 0) return out;
    let pos = 0;
    for (const b of parseBatches(records)) {
      out.set(Number(b.baseOffset), records.slice(pos, pos + b.sizeBytes));
      pos += b.sizeBytes;
      offset = b.baseOffset + BigInt(b.lastOffsetDelta) + 1n;
    }
  }
}

/** Same batch apart from the fields the broker assigns: base offset [0,8) and leader epoch [12,16). */
function sameBatch(stored: Uint8Array, produced: Uint8Array): boolean {
  if (stored.length !== produced.length) return false;
  for (let i = 8; i < stored.length; i++) {
    if (i >= 12 && i < 16) continue;
    if (stored[i] !== produced[i]) return false;
  }
  return true;
}

test("crash: kill -9 during a steady acks=1 produce loses no acknowledged batch", { timeout: 240_000 }, async () => {
  const dir = tempDir("strand-crash-");
  let broker: RunningBroker | null = null;
  try {
    const acked: Acked[] = [];
    // Two crashes: the second one hits a log that was itself recovered from the first.
    for (let round = 1; round <= 2; round++) {
      broker = await spawnBroker(dir);
      if (round === 1) {
        const admin = await WireClient.connect(broker.port);
        assert.equal((await createTopic(admin, "crash", { numPartitions: 3 })).errorCode, 0);
        admin.close();
      } else {
        assert.match(broker.output(), /not shut down cleanly/, "the restart knows it was a crash");
      }
      const stop = { now: false };
      const producers = [0, 1, 2].map((p) => produceSteadily(broker!.port, p, acked, stop));
      // Mid-stream: enough acknowledged to fill several segments per partition, requests in flight.
      const target = 1500 * round;
      const deadline = Date.now() + 60_000;
      while (acked.length < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      signal(broker, "SIGKILL");
      await broker.exited;
      stop.now = true;
      await Promise.all(producers);
      assert.ok(acked.length >= target, `only ${acked.length} batches acknowledged before kill ${round}`);
    }

    broker = await spawnBroker(dir);
    assert.match(broker.output(), /not shut down cleanly/, "the restart knows it was a crash");
    const c = await WireClient.connect(broker.port);
    try {
      for (const p of [0, 1, 2]) {
        const stored = await readAll(c, p);
        const mine = acked.filter((a) => a.partition === p);
        assert.ok(mine.length > 0);
        for (const a of mine) {
          const s = stored.get(a.baseOffset);
          assert.ok(s !== undefined, `partition ${p}: acknowledged offset ${a.baseOffset} is readable`);
          assert.ok(sameBatch(s, a.bytes), `partition ${p}: offset ${a.baseOffset} has the acknowledged bytes`);
        }
        // And the log goes on from its end.
        const next = await produce(c, "crash", p, buildBatch([{ value: "after the crash" }]), 1);
        assert.equal(next.errorCode, 0);
        assert.ok(Number(next.baseOffset) >= Math.max(...mine.map((a) => a.baseOffset)) + 1);
      }
    } finally {
      c.close();
    }
    signal(broker, "SIGTERM");
    assert.equal(await broker.exited, 0, `a clean stop after recovery:\n${broker.output().slice(-3000)}`);
    assert.ok(existsSync(`${dir}/.kafka_cleanshutdown`), "the clean stop leaves Kafka's marker");
    broker = null;
  } finally {
    if (broker !== null) {
      signal(broker, "SIGKILL");
      await broker.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
