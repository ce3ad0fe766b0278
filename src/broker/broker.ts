// Broker: wires the parts of one strand broker together and runs its start-up and shutdown in
// Kafka's order.
//
// Start-up: Kafka's top-level znodes → cluster id → broker id → logs loaded (recovered after an
// unclean stop; the event loop stays responsive meanwhile) → partitions empty
// until the controller speaks → listeners bound → /brokers/ids/<id> registered (ephemeral) →
// controller election. Shutdown reverses it: controller resigns, listeners close, waiting
// fetches complete, logs are flushed and closed, the registry session ends (the registration
// disappears).

import { KafkaController, ZkConfigAdmin, ZkTopicAdmin } from "../controller/mod.ts";
import type { TopicLogConfig } from "../log/mod.ts";
import { LogManager } from "../log/mod.ts";
import type { Platform } from "../platform/mod.ts";
import {
  BrokerIdZNode,
  BrokerSequenceIdZNode,
  ClusterIdZNode,
  ensureKafkaPaths,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import { ReplicaManager } from "../replication/mod.ts";
import { randomUuid, uuidToBase64 } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { apiHandlers } from "./api/mod.ts";
import type { BrokerConfig } from "./config.ts";
import { ConfigChangeWatcher } from "./config_change_watcher.ts";
import { RequestDispatcher } from "./dispatch.ts";
import { LocalControllerChannel } from "./local_channel.ts";
import { MetadataCache } from "./metadata_cache.ts";
import { createCoordinator, offsetsTopicEnsurer } from "./group_wiring.ts";
import { SocketServer } from "./server.ts";
import type { BrokerServices } from "./services.ts";

/** Kafka's reserved.broker.max.id: generated broker ids start above it. */
const RESERVED_BROKER_MAX_ID = 1000;

export class BrokerStartupError extends Error {
  override name = "BrokerStartupError";
}

export class Broker {
  private constructor(
    readonly config: BrokerConfig,
    readonly brokerId: number,
    readonly clusterId: string,
    readonly boundPorts: { name: string; host: string; port: number }[],
    readonly services: BrokerServices,
    private readonly server: SocketServer,
    private readonly controller: KafkaController,
    private readonly logManager: LogManager,
    private readonly registry: Registry,
    private readonly logger: Logger,
    private readonly configWatcher: ConfigChangeWatcher,
  ) {}

  get port(): number {
    return this.boundPorts[0].port;
  }

  static async start(platform: Platform, config: BrokerConfig, registry: Registry, logger: Logger): Promise<Broker> {
    await ensureKafkaPaths(registry);
    const clusterId = await getOrCreateClusterId(platform, registry, config.clusterId);
    const logDefaults: TopicLogConfig = {
      segmentBytes: config.logSegmentBytes,
      segmentMs: config.logRollMs,
      indexIntervalBytes: config.logIndexIntervalBytes,
      segmentIndexBytes: config.logIndexSizeMaxBytes,
      maxMessageBytes: config.messageMaxBytes,
      retentionMs: config.logRetentionMs,
      retentionBytes: config.logRetentionBytes,
      flushMessages: config.logFlushIntervalMessages,
      flushMs: config.logFlushIntervalMs,
      fileDeleteDelayMs: config.logSegmentDeleteDelayMs,
      cleanupPolicy: config.logCleanupPolicy,
    };
    const brokerId = config.brokerId >= 0 ? config.brokerId : await generateBrokerId(platform, config, registry);
    const log = logger.child({ broker: brokerId });
    const logManager = new LogManager(platform, config.logDirs, logDefaults, log, {
      numRecoveryThreadsPerDataDir: config.numRecoveryThreadsPerDataDir,
      retentionCheckMs: config.logRetentionCheckIntervalMs,
      flushCheckMs: config.logFlushSchedulerIntervalMs,
      flushRecoveryOffsetCheckpointMs: config.logFlushOffsetCheckpointIntervalMs,
      flushStartOffsetCheckpointMs: config.logFlushStartOffsetCheckpointIntervalMs,
      highWatermarkCheckpointMs: config.replicaHighWatermarkCheckpointIntervalMs,
    });
    // Recovery (after an unclean stop) runs here, before any listener is bound, as in Kafka.
    await logManager.startup(brokerId, clusterId);

    const metadata = new MetadataCache(brokerId);
    metadata.clusterId = clusterId;
    const replicaManager = new ReplicaManager(brokerId, logManager, platform.clock, log);
    const configAdmin = new ZkConfigAdmin(registry);
    const topicAdmin = new ZkTopicAdmin(platform, registry, metadata);
    const coordinator = createCoordinator(platform, config, replicaManager, log);
    const services: BrokerServices = {
      config,
      brokerId,
      metadata,
      replicaManager,
      topicAdmin,
      configAdmin,
      coordinator,
      ensureOffsetsTopic: offsetsTopicEnsurer(config, metadata, topicAdmin, log),
      registry,
      clock: platform.clock,
      logger: log,
    };
    const dispatcher = new RequestDispatcher(services, apiHandlers, log);
    const server = new SocketServer(platform, {
      listeners: config.listeners,
      socketRequestMaxBytes: config.socketRequestMaxBytes,
      connectionsMaxIdleMs: config.connectionsMaxIdleMs,
    }, dispatcher, log);
    const bound = await server.start();
    try {
      await register(platform, config, registry, brokerId, bound);
    } catch (e) {
      await server.stop();
      logManager.shutdown();
      throw e;
    }
    const channel = new LocalControllerChannel(brokerId, metadata, replicaManager, logDefaults);
    const listenerName = config.listeners[0].name;
    const controller = new KafkaController(registry, channel, platform.clock, { brokerId, listenerName }, log);
    const configWatcher = new ConfigChangeWatcher(registry, configAdmin, metadata, replicaManager, logDefaults, platform.clock, log);
    await configWatcher.startup();
    coordinator.startup();
    await controller.startup();
    log.info({ clusterId, ports: bound.map((b) => b.port) }, "broker started");
    return new Broker(config, brokerId, clusterId, bound, services, server, controller, logManager, registry, log, configWatcher);
  }

  async shutdown(): Promise<void> {
    this.logger.info({}, "broker shutting down");
    await this.controller.shutdown();
    await this.configWatcher.shutdown();
    await this.server.stop();
    this.services.coordinator.shutdown();
    this.services.replicaManager.shutdown();
    this.logManager.shutdown();
    try {
      await this.registry.delete(BrokerIdZNode.path(this.brokerId));
    } catch {
      // The session end removes it anyway.
    }
    this.logger.info({}, "broker stopped");
  }
}

async function getOrCreateClusterId(platform: Platform, registry: Registry, configured: string | null): Promise<string> {
  try {
    const { data } = await registry.getData(ClusterIdZNode.path);
    const id = ClusterIdZNode.decode(data);
    if (id === null) throw new BrokerStartupError(`${ClusterIdZNode.path} holds no cluster id`);
    return id;
  } catch (e) {
    if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
  }
  const id = configured ?? uuidToBase64(randomUuid((b) => platform.randomBytes(b)));
  await registry.ensurePath("/cluster");
  try {
    await registry.create(ClusterIdZNode.path, ClusterIdZNode.encode(id));
    return id;
  } catch (e) {
    if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
    return getOrCreateClusterId(platform, registry, configured);
  }
}

/** broker.id=-1: the id in meta.properties, else a new one from /brokers/seqid, as Kafka does. */
async function generateBrokerId(platform: Platform, config: BrokerConfig, registry: Registry): Promise<number> {
  for (const dir of config.logDirs) {
    const text = platform.fs.readFile(`${dir}/meta.properties`);
    const m = text === null ? null : /^broker\.id=(\d+)$/m.exec(new TextDecoder().decode(text));
    if (m) return Number(m[1]);
  }
  await registry.ensurePath(BrokerSequenceIdZNode.path);
  const stat = await registry.setData(BrokerSequenceIdZNode.path, new Uint8Array(0));
  return RESERVED_BROKER_MAX_ID + stat.version;
}

async function register(
  platform: Platform,
  config: BrokerConfig,
  registry: Registry,
  brokerId: number,
  bound: { name: string; host: string; port: number }[],
): Promise<void> {
  const endpoints = config.advertisedListeners.map((l) => {
    const boundPort = bound.find((b) => b.name === l.name)?.port ?? l.port;
    const host = l.host === "" || l.host === "0.0.0.0" || l.host === "::" ? platform.process.hostname() : l.host;
    return { listenerName: l.name, securityProtocol: "PLAINTEXT", host, port: l.port === 0 ? boundPort : l.port };
  });
  const data = BrokerIdZNode.encode({ endpoints, rack: config.rack }, platform.clock.nowMs());
  try {
    await registry.create(BrokerIdZNode.path(brokerId), data, "ephemeral");
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NodeExists") {
      throw new BrokerStartupError(
        `broker.id ${brokerId} is already registered at ${BrokerIdZNode.path(brokerId)} by a live broker; ` +
          `each broker needs its own broker.id`,
      );
    }
    throw e;
  }
}
