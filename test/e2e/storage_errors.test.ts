// A full disk and a process out of file descriptors, seen from clients over real sockets (issue 11,
// defects 5 and 6). The broker runs on the faulty platform (test/helpers/faulty_platform.ts), which
// raises ENOSPC (with a half-written batch) or EMFILE under its log dir, or reports a nearly full
// volume to statfs; no mount is needed. Each fault: produce is refused with KAFKA_STORAGE_ERROR
// (never acknowledged), fetch / metadata / groups are answered, the broker stays up with its dir
// online, /metrics, /v1/log-dirs and /v1/status/ready say what is wrong, and produce succeeds by
// itself once the fault is gone.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MetadataApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker, tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { fetchOffsets, findCoordinator, RawMember } from "../helpers/groups.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OVERRIDES = { "admin.listeners": "http://127.0.0.1:0", "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1" };

async function fetchValues(c: WireClient, topic: string): Promise<{ errorCode: number; values: string[] }> {
  const r = await fetchOnce(c, topic, 0, 0n);
  return { errorCode: r.errorCode, values: parseBatches(r.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((x) => text(x.value) ?? "")) };
}

async function metadataLeader(c: WireClient, topic: string): Promise<{ errorCode: number; leader: number }> {
  const res = await c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = (res.topics as Struct[])[0];
  const p = (t.partitions as Struct[])[0];
  return { errorCode: t.errorCode as number, leader: p.leaderId as number };
}

/** Produces until the answer is not KAFKA_STORAGE_ERROR (the fault lifted); fails after 20 s. */
async function produceUntilAccepted(c: WireClient, topic: string, value: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await produce(c, topic, 0, buildBatch([{ value }]), 1);
    if (r.errorCode !== ErrorCode.KAFKA_STORAGE_ERROR || Date.now() > deadline) return r;
    await sleep(100);
  }
}

async function ready(b: TestBroker): Promise<{ status: number; body: { error?: string } }> {
  const res = await fetch(`${b.adminUrl}/v1/status/ready`);
  return { status: res.status, body: await res.json() };
}

async function metricsText(b: TestBroker): Promise<string> {
  return await (await fetch(`${b.adminUrl}/metrics`)).text();
}

test("e2e storage errors: at ENOSPC produce is refused with KAFKA_STORAGE_ERROR, fetch, metadata and groups are answered, and produce resumes by itself", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const logger = recordingLogger();
  const b = await startBroker(OVERRIDES, tempDir("strand-e2e-enospc-"), logger, faulty);
  const c = await WireClient.connect(b.port);
  const member = await RawMember.connect(b.port, "g");
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    for (const v of ["a", "b", "c"]) assert.equal((await produce(c, "t", 0, buildBatch([{ value: v }]), 1)).errorCode, 0);
    await findCoordinator(c, "g");
    assert.equal((await member.join()).errorCode, 0);
    assert.equal(await member.sync([{ memberId: member.memberId, assignment: new Uint8Array(0) }]), 0);
    assert.deepEqual(await member.commit({ t: { 0: 2n } }), [0]);

    const lift = faulty.inject(b.logDir, "ENOSPC", { ops: ["write", "writeAtomic"], partialWrite: true });
    for (const acks of [1, -1]) {
      const refused = await produce(c, "t", 0, buildBatch([{ value: "refused" }]), acks);
      assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `acks=${acks}`);
      assert.ok((refused.errorMessage ?? "").includes(b.logDir), refused.errorMessage ?? "");
    }
    assert.deepEqual(await fetchValues(c, "t"), { errorCode: 0, values: ["a", "b", "c"] });
    assert.deepEqual(await metadataLeader(c, "t"), { errorCode: 0, leader: 0 });
    assert.equal(await member.heartbeat(), 0, "the group is served");
    assert.deepEqual(await member.commit({ t: { 0: 3n } }), [ErrorCode.NOT_COORDINATOR], "a commit is answered with a retriable error");
    assert.deepEqual((await fetchOffsets(c, "g", { t: [0] })).offsets, { "t-0": 2n });
    const metrics = await metricsText(b);
    assert.match(metrics, new RegExp(`strand_log_dir_appends_refused\\{dir="${b.logDir}"\\} 1`));
    assert.match(metrics, new RegExp(`strand_log_dir_transient_errors_total\\{dir="${b.logDir}",code="ENOSPC"\\} \\d+`));
    assert.match(metrics, /kafka_log_logmanager_offlinelogdirectorycount 0/);
    const dirs = (await (await fetch(`${b.adminUrl}/v1/log-dirs`)).json() as { log_dirs: { online: boolean; appends_refused: string | null; full: boolean }[] }).log_dirs;
    assert.equal(dirs[0].online, true);
    assert.equal(dirs[0].full, true);
    assert.match(dirs[0].appends_refused ?? "", /is full/);
    assert.equal((await ready(b)).status, 200, "every partition is still served (reads): ready");

    lift();
    const accepted = await produceUntilAccepted(c, "t", "d");
    assert.equal(accepted.errorCode, 0);
    assert.equal(accepted.baseOffset, 3n, "nothing refused was appended");
    assert.deepEqual(await fetchValues(c, "t"), { errorCode: 0, values: ["a", "b", "c", "d"] });
    assert.deepEqual(await member.commit({ t: { 0: 4n } }), [0]);
    assert.match(await metricsText(b), new RegExp(`strand_log_dir_appends_refused\\{dir="${b.logDir}"\\} 0`));
    assert.ok(logger.lines.some((l) => l.level === "warn" && /is full/.test(l.msg)), "the logs say so");
    assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), [], "no error-level line");
  } finally {
    member.c.close();
    c.close();
    await b.stop();
  }
});

test("e2e storage errors: below log.dir.min.free.bytes produce is refused (message naming the dir and free bytes) while group commits go on; it resumes when space is back", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const b = await startBroker({ ...OVERRIDES, "log.dir.min.free.bytes": "50000000" }, tempDir("strand-e2e-minfree-"), recordingLogger(), faulty);
  const c = await WireClient.connect(b.port);
  const member = await RawMember.connect(b.port, "g");
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await produce(c, "t", 0, buildBatch([{ value: "a" }]), 1)).errorCode, 0);
    await findCoordinator(c, "g");
    assert.equal((await member.join()).errorCode, 0);
    assert.equal(await member.sync([{ memberId: member.memberId, assignment: new Uint8Array(0) }]), 0);

    faulty.setUsableBytes(b.logDir, 40_000_000);
    const deadline = Date.now() + 20_000;
    let refused = await produce(c, "t", 0, buildBatch([{ value: "x" }]), 1);
    while (refused.errorCode === 0 && Date.now() < deadline) {
      await sleep(100);
      refused = await produce(c, "t", 0, buildBatch([{ value: "x" }]), 1);
    }
    assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    const msg = refused.errorMessage ?? "";
    assert.ok(msg.includes(b.logDir) && /\d+ bytes usable, below log.dir.min.free.bytes=50000000/.test(msg), msg);
    assert.deepEqual(await member.commit({ t: { 0: 1n } }), [0], "the internal topic may use the reserve");
    const storage = await (await fetch(`${b.adminUrl}/v1/log-dirs`)).json() as { log_dirs: { appends_refused: string | null; usable_bytes: number }[] };
    assert.match(storage.log_dirs[0].appends_refused ?? "", /below log.dir.min.free.bytes/, "the dashboard's source says so");

    faulty.setUsableBytes(b.logDir, null);
    const accepted = await produceUntilAccepted(c, "t", "b");
    assert.equal(accepted.errorCode, 0);
    const values = (await fetchValues(c, "t")).values;
    assert.equal(values[0], "a");
    assert.equal(values.at(-1), "b");
  } finally {
    member.c.close();
    c.close();
    await b.stop();
  }
});

test("e2e storage errors: out of file descriptors (EMFILE) a new partition is unavailable and the broker not ready, with its dir online; a restart with EMFILE keeps the dir online; both recover by themselves", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const logger = recordingLogger();
  const b = await startBroker(OVERRIDES, tempDir("strand-e2e-emfile-"), logger, faulty);
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "a")).errorCode, 0);
    assert.equal((await produce(c, "a", 0, buildBatch([{ value: "a0" }]), 1)).errorCode, 0);
    assert.equal((await ready(b)).status, 200);

    let lift = faulty.inject(b.logDir, "EMFILE", { ops: ["open", "writeAtomic"] });
    assert.equal((await createTopic(c, "b")).errorCode, 0);
    assert.equal((await produce(c, "b", 0, buildBatch([{ value: "b0" }]), 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal((await produce(c, "a", 0, buildBatch([{ value: "a1" }]), 1)).errorCode, 0, "partitions already open keep working");
    const notReady = await ready(b);
    assert.equal(notReady.status, 503);
    assert.match(notReady.body.error ?? "", /b-0/);
    assert.match(await metricsText(b), /strand_server_unserved_partitions 1/);
    const unserved = (await (await fetch(`${b.adminUrl}/v1/log-dirs`)).json() as { unserved_partitions: { topic: string; partition: number }[] }).unserved_partitions;
    assert.deepEqual(unserved.map((p) => `${p.topic}-${p.partition}`), ["b-0"]);
    assert.deepEqual(b.broker.services.logManager.onlineDirs, [b.logDir]);
    lift();
    assert.equal((await produceUntilAccepted(c, "b", "b0")).errorCode, 0);
    assert.equal((await ready(b)).status, 200);

    // The restart of the issue: EMFILE while the logs load. The dir stays online, the broker says
    // it is not ready and refuses produce instead of timing out, and serves once it can.
    c.close();
    lift = faulty.inject(`${b.logDir}/a-0`, "EMFILE", { ops: ["open"] });
    await b.restart();
    c = await WireClient.connect(b.port);
    assert.deepEqual(b.broker.services.logManager.onlineDirs, [b.logDir]);
    const deadline = Date.now() + 20_000;
    let r = await ready(b);
    while (r.status === 503 && !/a-0/.test(r.body.error ?? "") && Date.now() < deadline) r = await ready(b);
    assert.equal(r.status, 503);
    assert.match(r.body.error ?? "", /a-0/);
    assert.equal((await produce(c, "a", 0, buildBatch([{ value: "a2" }]), 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    // Fetch says KAFKA_STORAGE_ERROR from v6; older clients do not know it (Kafka answers them 6).
    assert.equal((await fetchOnce(c, "a", 0, 0n, { version: 11 })).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal((await fetchOnce(c, "a", 0, 0n, { version: 5 })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await fetchValues(c, "b")).errorCode, 0, "other partitions are served");
    lift();
    const accepted = await produceUntilAccepted(c, "a", "a2");
    assert.equal(accepted.errorCode, 0);
    assert.equal(accepted.baseOffset, 2n, "the same log, with its records");
    assert.deepEqual((await fetchValues(c, "a")).values, ["a0", "a1", "a2"]);
    while ((await ready(b)).status !== 200 && Date.now() < deadline) await sleep(50);
    assert.equal((await ready(b)).status, 200);
    assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), [], "no error-level line");
  } finally {
    c.close();
    await b.stop();
  }
});
