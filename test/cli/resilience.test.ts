// The console tools when the broker goes away: across a restart they reconnect, refresh
// metadata and carry on (the producer retries what was not acknowledged, the consumer resumes at
// its position); when it does not come back they end, after bounded retries, with one line on
// stderr and exit 1.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { lines, strandCommand, strandOk } from "./strand.ts";

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(args: string[]): Running {
  const child = spawn(strandCommand[0], [...strandCommand[1], ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  child.stdin!.on("error", () => {});
  const exited = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("cli resilience: produce and consume carry on across a broker restart", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "r", "--partitions", "2"]);
    const consumer = start(["consume", ...bs, "--topic", "r", "--from-beginning", "--max-messages", "4000"]);
    const producer = start(["produce", ...bs, "--topic", "r", "--acks", "all"]);
    producer.child.stdin!.write(lines(2000, "before-"));
    await until("the first 2000 lines consumed", () => consumer.stdout().split("\n").length > 2000);
    await b.restart();
    producer.child.stdin!.end(lines(2000, "after-"));
    assert.equal(await producer.exited, 0, producer.stderr());
    assert.equal(await consumer.exited, 0, consumer.stderr());
    // Nothing lost; per partition, in order. (A batch whose answer the restart lost may be
    // written twice, as with any producer without idempotence: the 4000 printed are then
    // followed by the rest, so compare as sets over everything there is.)
    const all = await strandOk(["consume", ...bs, "--topic", "r", "--from-beginning", "--timeout-ms", "1500"]);
    const want = [...lines(2000, "before-").trimEnd().split("\n"), ...lines(2000, "after-").trimEnd().split("\n")];
    assert.deepEqual([...new Set(all.trimEnd().split("\n"))].sort(), want.sort());
    const printed = consumer.stdout().trimEnd().split("\n");
    assert.equal(printed.length, 4000);
  } finally {
    await b.stop();
  }
});

test("cli resilience: a broker gone for good ends produce and consume with one line and exit 1", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  await strandOk(["topics", "create", ...bs, "--topic", "gone"]);
  const consumer = start(["consume", ...bs, "--topic", "gone", "--from-beginning"]);
  const producer = start(["produce", ...bs, "--topic", "gone"]);
  producer.child.stdin!.write("one\n");
  await until("the consumer printed a record", () => consumer.stdout() === "one\n");
  await b.stop();
  producer.child.stdin!.end("two\n");
  const [pc, cc] = await Promise.all([producer.exited, consumer.exited]);
  for (const [code, err] of [[pc, producer.stderr()], [cc, consumer.stderr()]] as const) {
    assert.equal(code, 1, err);
    assert.equal(err.trimEnd().split("\n").length, 1, err);
    assert.match(err, /^strand (produce|consume): .*(ECONNREFUSED|refused|closed)/i);
  }
});
