// npm run bench:quota [-- SECONDS]: how a 1 MiB/s produce quota holds for a greedy client (one
// Produce of 64 KiB at a time, as fast as the broker answers), with Kafka's default sampled rate
// (quota.window.num=11) and with 2 windows. Prints the MiB accepted in each second (read from the
// log) and the lowest and highest average over any 20 s window. Kafka's Rate divides by at least
// (num - 1) windows, so with 11 a new client is let through ~10 s of quota at once and then
// trickles until that sample expires: an 11 s sawtooth whose 20 s averages swing widely.
// Runs under Bun (`bun test/bench/quota_bench.ts`) and Deno (`deno run -A ...`).
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const MiB = 1_048_576;
const seconds = Number(process.argv[2] ?? 45);

async function run(windows: number): Promise<void> {
  const b = await startBroker({ "quota.window.num": String(windows) });
  const c = await WireClient.connect(b.port);
  try {
    await createTopic(c, "q");
    await c.request((await import("../../src/protocol/api/mod.ts")).AlterClientQuotasApi, 1, {
      entries: [{ entity: [{ entityType: "client-id", entityName: "wire-test" }], ops: [{ key: "producer_byte_rate", value: MiB, remove: false }] }],
      validateOnly: false,
    });
    while (!b.broker.clientQuotas!.produce.active) await new Promise((r) => setTimeout(r, 10));
    const size = () => b.broker.services.replicaManager.allPartitions().reduce((n, p) => n + p.log.sizeBytes, 0);
    const perSecond: number[] = [];
    let last = size();
    const timer = setInterval(() => {
      const now = size();
      perSecond.push(now - last);
      last = now;
    }, 1000);
    const batch = buildBatch(valueRecords(1, "v", 64 * 1024));
    const start = performance.now();
    while (performance.now() - start < seconds * 1000) {
      await c.request(ProduceApi, 8, { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: "q", partitionData: [{ index: 0, records: batch }] }] }, 60_000);
    }
    clearInterval(timer);
    let lo = Infinity, hi = 0;
    for (let i = 0; i + 20 <= perSecond.length; i++) {
      const avg = perSecond.slice(i, i + 20).reduce((a, x) => a + x, 0) / 20 / MiB;
      lo = Math.min(lo, avg);
      hi = Math.max(hi, avg);
    }
    const total = perSecond.reduce((a, x) => a + x, 0) / perSecond.length / MiB;
    console.log(`quota.window.num=${windows}: MiB accepted per second: ${perSecond.map((x) => (x / MiB).toFixed(2)).join(" ")}`);
    console.log(`quota.window.num=${windows}: 20 s averages ${lo.toFixed(3)}-${hi.toFixed(3)} MiB/s; over ${perSecond.length} s ${total.toFixed(3)} MiB/s (quota 1 MiB/s)`);
  } finally {
    c.close();
    await b.stop();
  }
}

await run(11);
await run(2);
