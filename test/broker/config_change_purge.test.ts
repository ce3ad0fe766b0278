// The ConfigChangeWatcher when the registry's disk is full: a round that finds a change
// notification old enough to purge still applies the changes it found (the purge, a delete the
// journal refuses, is said at warn and left for a later round), instead of failing the whole
// round at error and losing the change.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigChangeWatcher } from "../../src/broker/config_change_watcher.ts";
import { MetadataCache } from "../../src/broker/metadata_cache.ts";
import { ZkConfigAdmin } from "../../src/controller/mod.ts";
import { logConfigDefaults, type TopicLogConfig } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  ConfigType,
  EmbeddedRegistryStore,
  ensureKafkaPaths,
  TopicZNode,
} from "../../src/registry/mod.ts";
import type { ReplicaManager } from "../../src/replication/mod.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { tempDir } from "../registry/helpers.ts";

test("config change watcher at a full registry disk: the change is applied, the expired notification's purge is warned and left for later", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const { dir, cleanup } = tempDir();
  const store = EmbeddedRegistryStore.open(faulty, dir);
  const logger = recordingLogger();
  try {
    const r = store.session();
    await ensureKafkaPaths(r);
    await r.create(TopicZNode.path("t"), TopicZNode.encode(new Uint8Array(16), new Map([[0, { replicas: [0], addingReplicas: [], removingReplicas: [] }]])));
    await r.create(ConfigEntityZNode.path(ConfigType.Topic, "t"), ConfigEntityZNode.encode(new Map([["retention.ms", "1234"]])));
    await r.create(ConfigEntityChangeNotificationSequenceZNode.createPath, ConfigEntityChangeNotificationSequenceZNode.encode("topics/t"), "persistent-sequential");
    // Seen 16 minutes later: the notification is past Kafka's 15 minutes and is to be purged.
    const later = { ...faulty.clock, nowMs: () => faulty.clock.nowMs() + 16 * 60_000 };
    const metadata = new MetadataCache(0);
    const replicas = { allPartitions: () => [] } as unknown as ReplicaManager;
    const watcher = new ConfigChangeWatcher(r, new ZkConfigAdmin(r), metadata, replicas, { ...logConfigDefaults } as TopicLogConfig, later, logger);
    const lift = faulty.inject(dir, "ENOSPC", { ops: ["write"] });
    await watcher.startup();
    assert.deepEqual(metadata.topicOverrides("t"), { "retention.ms": "1234" }, "the change was applied");
    assert.equal((await r.getChildren("/config/changes")).length, 1, "the notification stays");
    assert.ok(logger.lines.some((l) => l.level === "warn" && /not purged/.test(l.msg)), "warned");
    assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), []);
    lift();
    await watcher.shutdown();
  } finally {
    await store.close();
    cleanup();
  }
});
