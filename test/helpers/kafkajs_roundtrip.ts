// kafkajs round trips the security tests share: produce and consume through a group on one
// broker, and a three-broker cluster's leader SIGKILLed under acks=all load (the Kafka factory
// carries the listener's SASL/TLS settings).
import assert from "node:assert/strict";
import type { Kafka } from "kafkajs";
import type { Cluster } from "./cluster.ts";

/** 100 messages produced (acks=all) to topic, then consumed from the beginning by a group, in order. */
export async function kafkajsRoundTrip(kafka: Kafka, topic: string, groupId = `g-${topic}`): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of 100 in 60 s`)), 60_000);
    consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(String(message.value));
        if (seen.length === 100) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  assert.deepEqual(seen, Array.from({ length: 100 }, (_, i) => `v${i}`), topic);
}

/**
 * Creates topic (one partition, three replicas, min.insync.replicas=2), produces 1000 messages
 * with acks=all, SIGKILLs the leader, produces 1000 more to the new one, restarts the old leader
 * and waits for it back in the ISR. Returns the values acknowledged, in order.
 */
export async function leaderKilledUnderAcksAll(c: Cluster, kafka: () => Kafka, topic: string, how: string): Promise<string[]> {
  const ka = kafka().admin();
  await ka.connect();
  await ka.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3, configEntries: [{ name: "min.insync.replicas", value: "2" }] }] });
  await ka.disconnect();
  const leader = await c.waitLeader(topic, 0, 30_000);
  // A new partition's ISR is all its replicas; acks=all with min.insync.replicas=2 is what
  // proves the followers fetch (over the listener's protocol), and the restarted broker's return.
  const acked: string[] = [];
  const send = async (from: number, n: number) => {
    const p = kafka().producer();
    await p.connect();
    for (let i = from; i < from + n; i += 50) {
      const batch = Array.from({ length: 50 }, (_, k) => ({ value: `m-${i + k}` }));
      await p.send({ topic, acks: -1, messages: batch });
      acked.push(...batch.map((m) => m.value));
    }
    await p.disconnect();
  };
  await send(0, 1000);
  await c.broker(leader).kill("SIGKILL");
  const next = await c.waitLeader(topic, 0, 60_000, leader);
  assert.notEqual(next, leader);
  await send(1000, 1000);
  await c.broker(leader).start();
  await c.waitFor(async () => (await c.partitionState(topic, 0))?.isr.length === 3, 60_000, `the restarted broker rejoins the ISR over ${how}`);
  return acked;
}
