// A log shipper writing into strand, as operators use Kafka: rsyslogd 8.2302 (Debian rsyslog)
// with omkafka (rsyslog-kafka, over librdkafka 2.0.2), run in the foreground (-n) with a config
// this test writes: its own work dir, pid file and imtcp listener on 127.0.0.1 (port 0, the port
// written to a file), no system service. Syslog lines sent over TCP come out of strand, read with
// strand's own Fetch, as the template formatted them, keyed by the sending host, in order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { parseBatches, text } from "../helpers/record_batch.ts";
import { skipUnless, stopProcess } from "../helpers/tools.ts";
import { createTopic, fetchOnce, listOffset, WireClient } from "../helpers/wire.ts";

const N = 2_000;
const WAIT_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => Promise<boolean> | boolean, log: () => string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; rsyslogd said: ${log().slice(-3000)}`);
    await sleep(100);
  }
}

function sendLines(port: number, lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = new Socket();
    s.once("error", reject);
    s.connect(port, "127.0.0.1", () => {
      s.end(lines.map((l) => `${l}\n`).join(""), () => resolve());
    });
  });
}

test(`rsyslogd + omkafka: ${N} syslog lines over imtcp arrive in strand formatted, keyed by host, in order`, { skip: skipUnless("omkafka") }, async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  const dir = tempDir("strand-rsyslog-");
  let rsyslogd: ChildProcess | null = null;
  let log = "";
  try {
    const topic = "syslog";
    assert.equal((await createTopic(c, topic, { numPartitions: 1 })).errorCode, 0);
    const portFile = join(dir, "imtcp.port");
    const conf = join(dir, "rsyslog.conf");
    writeFileSync(conf, [
      `global(workDirectory="${dir}" processInternalMessages="on")`,
      `module(load="imtcp")`,
      `module(load="omkafka")`,
      `input(type="imtcp" address="127.0.0.1" port="0" listenPortFileName="${portFile}" ruleset="ship")`,
      `template(name="line" type="string" string="%syslogtag%%msg%")`,
      `template(name="host" type="string" string="%hostname%")`,
      `ruleset(name="ship") {`,
      `  action(type="omkafka" broker=["${b.bootstrap}"] topic="${topic}" template="line" key="host" dynaKey="on"`,
      `         confParam=["acks=all", "linger.ms=5", "client.id=rsyslog-omkafka"])`,
      `}`,
      "",
    ].join("\n"));
    rsyslogd = spawn("/usr/sbin/rsyslogd", ["-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")], { stdio: ["ignore", "pipe", "pipe"] });
    rsyslogd.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    rsyslogd.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    await waitFor("rsyslogd's imtcp port file", () => existsSync(portFile) && readFileSync(portFile, "utf8").trim() !== "", () => log);
    const port = Number(readFileSync(portFile, "utf8").trim());

    // RFC 3164 lines from two hosts; the messages carry non-ASCII text, kept as UTF-8 bytes.
    const lines: string[] = [];
    const expected: { key: string; value: string }[] = [];
    for (let i = 0; i < N; i++) {
      const host = i % 2 === 0 ? "web-1" : "db-2";
      const msg = `request ${i} done in ${i % 97} ms — ünïcödé`;
      lines.push(`<14>Dec  2 12:00:00 ${host} app[${100 + (i % 2)}]: ${msg}`);
      expected.push({ key: host, value: `app[${100 + (i % 2)}]: ${msg}` });
    }
    await sendLines(port, lines);
    await waitFor(`${N} records in ${topic}-0`, async () => (await listOffset(c, topic, 0, -1n)).offset >= BigInt(N), () => log);

    const got: { key: string | null; value: string | null }[] = [];
    let offset = 0n;
    while (got.length < N) {
      const r = await fetchOnce(c, topic, 0, offset);
      assert.equal(r.errorCode, 0);
      for (const batch of parseBatches(r.records ?? new Uint8Array())) {
        for (const rec of batch.records) {
          got.push({ key: text(rec.key), value: text(rec.value) });
          offset = rec.offset + 1n;
        }
      }
    }
    assert.equal(got.length, N);
    assert.deepEqual(got, expected);
    await stopProcess(rsyslogd);
    assert.equal((await listOffset(c, topic, 0, -1n)).offset, BigInt(N), "nothing sent twice on shutdown");
  } finally {
    if (rsyslogd !== null) await stopProcess(rsyslogd);
    c.close();
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
