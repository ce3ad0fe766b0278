// LeaderAndIsr, StopReplica and UpdateMetadata naming a topic no topic can have (control
// characters, '/', "..", too long): the broker never applies it (the name would become a log dir,
// or a registry path the registry refuses). A controller never sends such a name, so the request
// is malformed and the connection is closed (src/broker/api/control_names.ts), with no directory
// created and nothing logged at error level; the broker keeps serving. Found by the wire fuzzer
// (test/fuzz): a LeaderAndIsr with a control character in a topic name made the registry throw
// BadArguments out of the handler, closing the connection with an error-level line. Who may send
// these requests at all is another matter (authorization); here the broker only keeps itself whole.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  leaderAndIsrRequest,
  stopReplicaRequest,
  updateMetadataRequest,
} from "../../src/controller/control_requests.ts";
import type { TopicInfo } from "../../src/controller/mod.ts";
import { ApiVersionsApi, LeaderAndIsrApi, StopReplicaApi, UpdateMetadataApi } from "../../src/protocol/api/mod.ts";
import type { ApiSchema, Struct } from "../../src/protocol/mod.ts";
import type { PartitionState } from "../../src/replication/mod.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { WireClient } from "../helpers/wire.ts";

const illegalNames = ["a\u0001b", "x/../../escaped", "..", "t".repeat(250), "sp ace"];

function topic(name: string): TopicInfo {
  const p: PartitionState = { topic: name, partition: 0, topicId: new Uint8Array(16), controllerEpoch: 1000, leader: 0, leaderEpoch: 1, isr: [0], replicas: [0], partitionEpoch: 1 };
  return { name, topicId: new Uint8Array(16), partitions: [p], configs: {}, configsZxid: -1n };
}

test("LeaderAndIsr / StopReplica / UpdateMetadata with illegal topic names: connection closed, nothing created, no error logged", async () => {
  const logger = recordingLogger();
  const logDir = tempDir();
  const b = await startBroker({}, logDir, logger);
  try {
    const before = readdirSync(logDir).sort();
    const topics = illegalNames.map(topic);
    // An epoch above the real controller's, and an unknown broker epoch: only the names are wrong.
    const requests: [ApiSchema, number, Struct][] = [
      [LeaderAndIsrApi, 6, leaderAndIsrRequest(0, 1000, -1n, topics, [], 6)],
      [StopReplicaApi, 3, stopReplicaRequest(0, 1000, -1n, illegalNames.map((n) => ({ topic: n, partition: 0, deletePartition: true, leaderEpoch: -1 })), 3)],
      [UpdateMetadataApi, 7, updateMetadataRequest(0, 1000, -1n, [], topics, ["y\u0002z"], 7)],
    ];
    for (const [api, version, body] of requests) {
      const c = await WireClient.connect(b.port);
      try {
        await assert.rejects(c.request(api, version, body), /connection closed/, `${api.name} v${version}`);
      } finally {
        c.close();
      }
    }
    const c = await WireClient.connect(b.port);
    await c.request(ApiVersionsApi, 0, {});
    c.close();
    assert.deepEqual(readdirSync(logDir).sort(), before, "no log dir created for an illegal name");
    assert.ok(!existsSync(join(logDir, "..", "escaped-0")));
    assert.deepEqual(logger.lines.filter((l) => l.level === "error"), []);
  } finally {
    await b.stop();
  }
});
