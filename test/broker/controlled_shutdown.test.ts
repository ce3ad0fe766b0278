// requestControlledShutdown against a fake controller: ControlledShutdown v3 carries the broker id
// and epoch, the answer's remaining partitions come back by name, and an unreachable or silent
// controller rejects instead of hanging.
import assert from "node:assert/strict";
import { test } from "node:test";
import { requestControlledShutdown } from "../../src/broker/controlled_shutdown.ts";
import { KafkaConnectionError } from "../../src/client/connection.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { startFakeKafka } from "../helpers/fake_kafka.ts";

test("controlled shutdown: v3 with broker id and epoch; the remaining partitions come back", async () => {
  const platform = await loadPlatform();
  const seen: { version: number; body: Record<string, unknown> }[] = [];
  const server = await startFakeKafka(platform, (req, reply) => {
    seen.push({ version: req.apiVersion, body: req.body });
    reply({ errorCode: 0, remainingPartitions: [{ topicName: "a", partitionIndex: 2 }, { topicName: "b", partitionIndex: 0 }] });
  });
  try {
    const res = await requestControlledShutdown(platform, { host: "127.0.0.1", port: server.port }, 3, 1234n, 5_000);
    assert.deepEqual(res, { errorCode: 0, remaining: [{ topic: "a", partition: 2 }, { topic: "b", partition: 0 }] });
    assert.deepEqual(seen, [{ version: 3, body: { brokerId: 3, brokerEpoch: 1234n } }]);
  } finally {
    await server.stop();
  }
});

test("controlled shutdown: an error answer resolves with its code", async () => {
  const platform = await loadPlatform();
  const server = await startFakeKafka(platform, (_req, reply) => reply({ errorCode: 77, remainingPartitions: [] }));
  try {
    assert.deepEqual(await requestControlledShutdown(platform, { host: "127.0.0.1", port: server.port }, 3, 1n, 5_000), { errorCode: 77, remaining: [] });
  } finally {
    await server.stop();
  }
});

test("controlled shutdown: a silent or absent controller rejects", async () => {
  const platform = await loadPlatform();
  const server = await startFakeKafka(platform, () => {});
  const port = server.port;
  try {
    await assert.rejects(requestControlledShutdown(platform, { host: "127.0.0.1", port }, 3, 1n, 300), /no response within 300 ms/);
  } finally {
    await server.stop();
  }
  await assert.rejects(requestControlledShutdown(platform, { host: "127.0.0.1", port }, 3, 1n, 1_000), KafkaConnectionError);
});
