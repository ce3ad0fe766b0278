// Broker: wires the parts of one strand broker together and runs its start-up and shutdown in
// Kafka's order.
//
// Start-up: Kafka's top-level znodes → cluster id → broker id → logs loaded (recovered after an
// unclean stop; the event loop stays responsive meanwhile) → partitions empty
// until the controller speaks → listeners bound → /brokers/ids/<id> registered (ephemeral) →
// controller election; replica fetchers start as LeaderAndIsr makes this broker a follower.
// Shutdown: a controlled shutdown first (the controller moves this broker's leaderships away and
// takes it out of the ISRs, ControlledShutdown 7), then it reverses start-up: controller resigns,
// the controller channel and fetchers stop, listeners close, waiting fetches and produces
// complete, logs are flushed and closed, the registry session ends (the registration disappears). A failed log dir takes only its partitions offline (log_dir_events.ts); when every
// dir has failed the broker shuts itself down and `fatal` resolves (the CLI then exits 1).

import { AclAuthorizer, aclStoreOf } from "../authorizer/mod.ts";
import { KafkaController, RemoteControllerChannel, requestElectLeaders, ZkConfigAdmin, ZkTopicAdmin } from "../controller/mod.ts";
import type { TopicLogConfig } from "../log/mod.ts";
import { LogDirsFailedError, LogManager } from "../log/mod.ts";
import { type Platform, randomBelow, type TlsClientOptions } from "../platform/mod.ts";
import {
  BrokerIdZNode,
  BrokerSequenceIdZNode,
  ClusterIdZNode,
  ensureKafkaPaths,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import { registryIsrWriter, ReplicaFetcherManager, ReplicaManager } from "../replication/mod.ts";
import { ErrorCode, fetchSessionEvictionMs, randomUuid, uuidToBase64 } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { apiHandlers } from "./api/mod.ts";
import type { BrokerConfig } from "./config.ts";
import { ConfigChangeWatcher } from "./config_change_watcher.ts";
import { replicationQuotasOf } from "./replication_quotas.ts";
import { requestControlledShutdown } from "./controlled_shutdown.ts";
import { alterPartitionIsrWriter } from "./alter_partition_sender.ts";
import { listenerSaslSettings } from "./sasl_settings.ts";
import { type LoadedTls, loadListenerTls, TlsFileWatcher, tlsSettingsError } from "./tls_settings.ts";
import { ScramCredentialStore } from "./scram_credentials.ts";
import { ClientQuotas } from "./client_quota_manager.ts";
import { QuotaStore } from "./quota_config.ts";
import { IpConnectionRates } from "./ip_connection_rate.ts";
import { DynamicBrokerConfig, logDefaultsOf } from "./dynamic_config.ts";
import { watchLogDirFailures } from "./log_dir_events.ts";
import { RequestDispatcher, type RequestInterceptor, type RequestObserver } from "./dispatch.ts";
import { LocalControllerChannel } from "./local_channel.ts";
import { ControlFence, registeredBroker } from "./control_fence.ts";
import { type BrokerEndpoint, MetadataCache } from "./metadata_cache.ts";
import { createCoordinator, offsetsTopicEnsurer } from "./group_wiring.ts";
import { ProducerIdManager } from "../coordinator/mod.ts";
import { createTxnCoordinator, metadataLeaderLookup, transactionTopicEnsurer } from "./txn_wiring.ts";
import { InterBrokerConnections, InterBrokerTxnMarkerSender, LocalFirstTxnMarkerSender } from "./txn_marker_sender.ts";
import { type ConnectionLimits, type NetworkStats, SocketServer } from "./server.ts";
import { FetchSessionCache } from "./fetch_session.ts";
import type { BrokerServices } from "./services.ts";

/** Kafka's reserved.broker.max.id: generated broker ids start above it. */
const RESERVED_BROKER_MAX_ID = 1000;
/** How long the controller's channel waits before reconnecting to a broker it could not reach. */
const CONTROLLER_CHANNEL_BACKOFF_MS = 500;
/** How long a stopping controller waits for its last requests to be answered before resigning. */
const CONTROLLER_DRAIN_MS = 5000;

export class BrokerStartupError extends Error {
  override name = "BrokerStartupError";
}

export class Broker {
  /** Resolves, with why, once the broker stopped by itself because every log dir failed. */
  readonly fatal: Promise<Error>;
  private resolveFatal: (err: Error) => void = () => {};
  private failed = false;
  private stopping: Promise<void> | null = null;
  /** Unsubscribes the re-registration that follows a registry session renewal. */
  private stopReRegistering: () => void = () => {};

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
    private readonly platform: Platform,
    private readonly network: {
      local: LocalControllerChannel;
      channel: RemoteControllerChannel;
      fetchers: ReplicaFetcherManager;
      tlsWatchers: TlsFileWatcher[];
      interBrokerTls: TlsClientOptions | undefined;
    },
  ) {
    this.fatal = new Promise((resolve) => (this.resolveFatal = resolve));
  }

  /** Every log dir failed: nothing is left to serve (Kafka halts). Shuts down, then `fatal`. */
  private failStop(err: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.logger.error({ err: err.message }, "every log dir has failed; shutting down");
    this.shutdown().then(
      () => this.resolveFatal(err),
      (e) => {
        this.logger.error({ err: (e as Error).stack }, "shutdown after log dir failures failed");
        this.resolveFatal(err);
      },
    );
  }

  get port(): number {
    return this.boundPorts[0].port;
  }

  private dispatcher: RequestDispatcher<BrokerServices> | null = null;
  /** Client quota enforcement: its throttle counts feed /metrics and the dashboard. */
  clientQuotas: ClientQuotas | null = null;

  /** True while this broker is the cluster's active controller. */
  /** The network layer's figures (connections, frame pool, refusals) for /metrics. */
  networkStats(): NetworkStats {
    return this.server.stats();
  }

  get isActiveController(): boolean {
    return this.controller.isActive;
  }

  /** Tests only: sets (or, with null, removes) what sees each request before its handler (dispatch.ts). */
  setRequestInterceptor(interceptor: RequestInterceptor | null): void {
    if (this.dispatcher !== null) this.dispatcher.interceptor = interceptor;
  }

  /** Sets (or, with null, removes) what is told of every request answered (the admin's /metrics). */
  setRequestObserver(observer: RequestObserver | null): void {
    if (this.dispatcher !== null) this.dispatcher.observer = observer;
  }

  static async start(platform: Platform, config: BrokerConfig, registry: Registry, logger: Logger): Promise<Broker> {
    // TLS listeners' PEM files are read first: a missing or malformed one stops start-up, naming its key.
    const tlsByListener = new Map<string, LoadedTls>();
    for (const [name, sec] of config.security.listeners) {
      if (sec.ssl !== null) tlsByListener.set(name, loadListenerTls(platform.fs, sec.ssl));
    }
    // The broker's own connections speak TLS as the inter-broker listener does (a copy: reloads update it in place).
    const interTls = tlsByListener.get(config.security.interBrokerListener)?.client;
    const interBrokerTls: TlsClientOptions | undefined = interTls === undefined ? undefined : { ...interTls };
    await ensureKafkaPaths(registry);
    const clusterId = await getOrCreateClusterId(platform, registry, config.clusterId);
    const logDefaults: TopicLogConfig = logDefaultsOf(config);
    const brokerId = config.brokerId >= 0 ? config.brokerId : await generateBrokerId(platform, config, registry);
    const log = logger.child({ broker: brokerId });
    // Dynamic broker configs (/config/brokers/<id>, <default>) update logDefaults in place.
    const dynamicConfig = new DynamicBrokerConfig(config, brokerId, logDefaults, registry, log);
    await dynamicConfig.load();
    const logManager = new LogManager(platform, config.logDirs, logDefaults, log, {
      numRecoveryThreadsPerDataDir: config.numRecoveryThreadsPerDataDir,
      retentionCheckMs: config.logRetentionCheckIntervalMs,
      producerIdExpirationMs: config.producerIdExpirationMs,
      producerIdExpirationCheckMs: config.producerIdExpirationCheckIntervalMs,
      flushCheckMs: config.logFlushSchedulerIntervalMs,
      flushRecoveryOffsetCheckpointMs: config.logFlushOffsetCheckpointIntervalMs,
      flushStartOffsetCheckpointMs: config.logFlushStartOffsetCheckpointIntervalMs,
      highWatermarkCheckpointMs: config.replicaHighWatermarkCheckpointIntervalMs,
      minFreeBytes: config.logDirMinFreeBytes,
      cleaner: {
        enable: config.logCleaner.enable,
        threads: config.logCleaner.threads,
        dedupeBufferBytes: config.logCleaner.dedupeBufferBytes,
        dedupeBufferLoadFactor: config.logCleaner.ioBufferLoadFactor,
        ioBufferBytes: config.logCleaner.ioBufferBytes,
        backoffMs: config.logCleaner.backoffMs,
      },
    });
    // Recovery (after an unclean stop) runs here, before any listener is bound, as in Kafka.
    await logManager.startup(brokerId, clusterId);

    const metadata = new MetadataCache(brokerId);
    metadata.clusterId = clusterId;
    const replicationQuotas = replicationQuotasOf(platform.clock, dynamicConfig);
    const replicaManager = new ReplicaManager(brokerId, logManager, platform.clock, log, {
      replicaLagTimeMaxMs: config.replication.replicaLagTimeMaxMs,
      // KIP-497 from inter.broker.protocol.version 2.7 in a cluster; a single node has no
      // inter-broker listener to send AlterPartition on, and is its own controller anyway.
      isrWriter: config.replication.alterPartitionEnable && config.zookeeperConnect !== null
        ? alterPartitionIsrWriter({
          brokerId,
          controllerId: () => metadata.controllerId,
          brokerEpoch: () => brokerEpoch,
          connections: new InterBrokerConnections(platform, `strand-alter-partition-${brokerId}`, (id): BrokerEndpoint | undefined => local.brokerEndpoint(id), {
            requestTimeoutMs: config.replication.controllerSocketTimeoutMs,
            sasl: config.security.interBrokerSasl ?? undefined,
            tls: interBrokerTls,
          }, log),
          logger: log,
        })
        : registryIsrWriter(registry, log, () => platform.clock.monotonicMs()),
      leaderQuota: replicationQuotas.leader,
    });
    let self: Broker | undefined;
    watchLogDirFailures(logManager, replicaManager, registry, brokerId, log, (dir) => {
      self?.failStop(new LogDirsFailedError(`every log dir has failed (${config.logDirs.join(",")}); the last was ${dir}`));
    });
    const configAdmin = new ZkConfigAdmin(registry, log);
    const topicAdmin = new ZkTopicAdmin(platform, registry, metadata, log);
    const coordinator = createCoordinator(platform, config, replicaManager, log);
    // The broker's own connections to other brokers log in as the inter-broker listener requires.
    const interBrokerSasl = config.security.interBrokerSasl ?? undefined;
    const local = new LocalControllerChannel(brokerId, metadata, replicaManager, logDefaults, configAdmin, (topics) => coordinator.onTopicsDeleted(topics), {
      registeredBroker: (id) => registeredBroker(registry, id, config.security.interBrokerListener),
      logger: log,
    });
    const channel = new RemoteControllerChannel(platform, brokerId, local, log, {
      requestTimeoutMs: config.replication.controllerSocketTimeoutMs,
      backoffMs: CONTROLLER_CHANNEL_BACKOFF_MS,
      sasl: interBrokerSasl,
      tls: interBrokerTls,
      // Replicas a broker answers KAFKA_STORAGE_ERROR for lose leadership (a failed log dir).
      onResponse: (r) => controller.onControlResponse(r),
    });
    const fetchers = new ReplicaFetcherManager(platform, brokerId, replicaManager, (id) => local.brokerEndpoint(id), log, {
      numReplicaFetchers: config.replication.numReplicaFetchers,
      replicaFetchMaxBytes: config.replication.replicaFetchMaxBytes,
      replicaFetchResponseMaxBytes: config.replication.replicaFetchResponseMaxBytes,
      replicaFetchWaitMaxMs: config.replication.replicaFetchWaitMaxMs,
      replicaFetchMinBytes: config.replication.replicaFetchMinBytes,
      replicaFetchBackoffMs: config.replication.replicaFetchBackoffMs,
      requestTimeoutMs: config.replication.replicaSocketTimeoutMs,
      sasl: interBrokerSasl,
      tls: interBrokerTls,
      quota: replicationQuotas.follower,
    });
    replicaManager.fetchers = fetchers;
    const listenerName = config.security.interBrokerListener;
    const controller = new KafkaController(registry, channel, platform.clock, {
      brokerId,
      listenerName,
      get uncleanLeaderElectionEnable() { // dynamic: read at each election
        return dynamicConfig.effective.replication.uncleanLeaderElectionEnable;
      },
      autoLeaderRebalanceEnable: config.replication.autoLeaderRebalanceEnable,
      leaderImbalanceCheckIntervalMs: config.replication.leaderImbalanceCheckIntervalMs,
      leaderImbalancePerBrokerPercentage: config.replication.leaderImbalancePerBrokerPercentage,
      deleteTopicEnable: config.deleteTopicEnable,
    }, log);
    let brokerEpoch = -1n;
    const producerIds = new ProducerIdManager(brokerId, registry, log);
    // Kafka's marker channel uses request.timeout.ms (30 s); controller.socket.timeout.ms has the same default.
    const markerSender = new LocalFirstTxnMarkerSender(brokerId, replicaManager, new InterBrokerTxnMarkerSender(platform, brokerId, (id) => local.brokerEndpoint(id), {
      requestTimeoutMs: config.replication.controllerSocketTimeoutMs,
      sasl: interBrokerSasl,
      tls: interBrokerTls,
    }, log));
    const txnCoordinator = createTxnCoordinator(platform, config, replicaManager, log, {
      generateProducerId: () => producerIds.generateProducerId(),
      markerSender,
      leaderOf: metadataLeaderLookup(metadata),
      transactionTopicPartitionCount: () => metadata.getTopic("__transaction_state")?.partitions.length,
    });
    const services: BrokerServices = {
      config,
      dynamicConfig,
      brokerId,
      metadata,
      replicaManager,
      logManager,
      topicAdmin,
      configAdmin,
      coordinator,
      producerIds,
      ensureOffsetsTopic: offsetsTopicEnsurer(config, metadata, topicAdmin, log),
      ensureTransactionTopic: transactionTopicEnsurer(config, metadata, topicAdmin, log),
      txnCoordinator,
      txnMarkerSender: markerSender,
      txnVerifyConnections: new InterBrokerConnections(platform, `strand-txn-verify-${brokerId}`, (id) => local.brokerEndpoint(id), {
        requestTimeoutMs: config.replication.controllerSocketTimeoutMs,
        sasl: interBrokerSasl,
        tls: interBrokerTls,
      }, log),
      controlPlane: local,
      controller,
      brokerEpoch: () => brokerEpoch,
      controlFence: new ControlFence(registry, brokerId, () => brokerEpoch, () => local.controllerEpochSeen, () => platform.clock.monotonicMs()),
      async electLeaders(electionType, partitions) {
        if (controller.isActive) return await controller.electLeaders(electionType, partitions);
        const endpoint = local.brokerEndpoint(metadata.controllerId);
        if (endpoint === undefined) {
          return partitions.map((p) => ({ ...p, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: "no controller is known" }));
        }
        const r = await requestElectLeaders(platform, endpoint, electionType, partitions, config.replication.controllerSocketTimeoutMs, interBrokerSasl, interBrokerTls);
        if (r.errorCode !== ErrorCode.NONE) return partitions.map((p) => ({ ...p, errorCode: r.errorCode, errorMessage: null }));
        return r.results;
      },
      registry,
      clock: platform.clock,
      logger: log,
      authorizer: null,
      resolveHost: (name) => platform.resolveHost(name),
      fetchSessions: new FetchSessionCache(config.maxIncrementalFetchSessionCacheSlots, fetchSessionEvictionMs, () => randomBelow(platform, 0x7fffffff) / 0x7fffffff),
    };
    const dispatcher = new RequestDispatcher(services, apiHandlers, log);
    // Quotas too are read before the first connection, so no client runs unthrottled meanwhile.
    const quotaStore = new QuotaStore(registry, log, (name) => platform.resolveHost(name));
    await quotaStore.load();
    const clientQuotas = new ClientQuotas(
      quotaStore,
      config.quotaWindowNum,
      config.quotaWindowSizeSeconds,
      () => platform.clock.monotonicMs(),
      config.controllerQuotaWindowNum,
      config.controllerQuotaWindowSizeSeconds,
    );
    dispatcher.throttler = clientQuotas;
    services.controllerMutationQuota = clientQuotas.controllerMutation;
    // Credentials are read before the first connection is accepted, so no login races the load.
    const scramCredentials = new ScramCredentialStore(registry, log);
    await scramCredentials.load();
    // ACLs too: every one is in memory before a request can be authorized against them.
    if (config.authorizer !== null) {
      const authorizer = new AclAuthorizer(registry, config.authorizer, platform.clock, log);
      await authorizer.start();
      services.authorizer = authorizer;
    }
    const server = new SocketServer(platform, {
      listeners: config.listeners.map((l) => ({
        ...l,
        sasl: listenerSaslSettings(config.security, l.name, scramCredentials, platform),
        tls: tlsByListener.get(l.name)?.server,
        principalMapper: config.security.listeners.get(l.name)?.ssl?.principalMapper,
        tlsError: (e: Error) => tlsSettingsError(config.security.listeners.get(l.name)!.ssl!, l.name, e),
        // Kafka's protectedListener: only beside other listeners, or one listener would be unbounded.
        interBroker: config.listeners.length > 1 && l.name === config.security.interBrokerListener,
      })),
      failedAuthenticationDelayMs: config.security.connectionFailedAuthenticationDelayMs,
      socketRequestMaxBytes: config.socketRequestMaxBytes,
      connectionsMaxIdleMs: config.connectionsMaxIdleMs,
      queuedMaxRequestBytes: config.queuedMaxRequestBytes,
      ipConnectionRates: new IpConnectionRates((ip) => quotaStore.connectionCreationRate(ip), config.quotaWindowNum, config.quotaWindowSizeSeconds),
      ...connectionLimitsOf(dynamicConfig.effective),
    }, dispatcher, log);
    // The connection limits are dynamic broker configs: a change applies to the next connection.
    dynamicConfig.listeners.push((effective) => server.setConnectionLimits(connectionLimitsOf(effective)));
    // A listener that cannot bind (or a registration refused) stops start-up with the logs closed
    // cleanly, so the next start does not recover them as after a crash.
    let bound;
    try {
      bound = await server.start();
      brokerEpoch = await register(platform, config, registry, brokerId, bound);
    } catch (e) {
      await server.stop();
      await fetchers.shutdown();
      await aclStoreOf(services.authorizer)?.shutdown();
      logManager.shutdown();
      throw e;
    }
    // Certificates renewed on disk are taken up without a restart.
    const tlsWatchers: TlsFileWatcher[] = [];
    for (const [name, sec] of config.security.listeners) {
      const listener = server.listener(name);
      if (sec.ssl === null || listener === undefined) continue;
      const onClient = name === config.security.interBrokerListener && interBrokerTls !== undefined
        ? (client: TlsClientOptions) => Object.assign(interBrokerTls, client)
        : undefined;
      const w = new TlsFileWatcher(platform, name, sec.ssl, listener, log, onClient);
      w.start();
      tlsWatchers.push(w);
    }
    replicaManager.startup();
    const configWatcher = new ConfigChangeWatcher(registry, configAdmin, metadata, replicaManager, logDefaults, platform.clock, log, dynamicConfig);
    configWatcher.userChanged = (user) => scramCredentials.refresh(user);
    configWatcher.quotaEntityChanged = async (entityPath) => {
      if (!(await quotaStore.refresh(entityPath))) log.warn({ entity: entityPath }, "config change names a quota entity that does not parse; skipped");
    };
    await configWatcher.startup();
    coordinator.startup();
    services.producerIds.startup();
    txnCoordinator.startup();
    await controller.startup();
    log.info({ clusterId, ports: bound.map((b) => b.port) }, "broker started");
    self = new Broker(config, brokerId, clusterId, bound, services, server, controller, logManager, registry, log, configWatcher, platform, {
      local,
      channel,
      fetchers,
      tlsWatchers,
      interBrokerTls,
    });
    // A ZooKeeper session can expire: its replacement registers again, and the controller re-runs.
    self.stopReRegistering = registry.onNewSession(() => {
      log.warn({ sessionId: `0x${registry.sessionId.toString(16)}` }, "registry session renewed: registering again");
      register(platform, config, registry, brokerId, bound).then((epoch) => (brokerEpoch = epoch), (e) =>
        log.error({ err: (e as Error).message }, "re-registration after session renewal failed")
      );
      void controller.onNewSession();
    });
    self.dispatcher = dispatcher;
    self.clientQuotas = clientQuotas;
    return self;
  }

  /** Idempotent: a second call (the CLI's after a failStop) waits for the first. */
  shutdown(): Promise<void> {
    return (this.stopping ??= this.stop());
  }

  /**
   * Kafka's controlled shutdown: asks the controller to move away every leadership this broker
   * holds (and take it out of the ISRs) before it stops, retrying while partitions remain, so
   * clients move to the new leaders without waiting for a session timeout. Gives up after
   * controlled.shutdown.max.retries and stops anyway, as Kafka does.
   */
  async controlledShutdown(): Promise<void> {
    const r = this.config.replication;
    for (let attempt = 0; attempt <= r.controlledShutdownMaxRetries; attempt++) {
      if (attempt > 0) await new Promise<void>((resolve) => this.platform.clock.setTimeout(resolve, r.controlledShutdownRetryBackoffMs));
      try {
        // Read at each attempt: a re-registration (session renewal) changes it, and the
        // controller wants the current one exactly.
        const result = await this.askControllerToShutDown(this.services.brokerEpoch());
        if (result === null) return; // no other broker: nothing to move
        if (result.errorCode === ErrorCode.NONE && result.remaining.length === 0) {
          this.logger.info({ attempt }, "controlled shutdown succeeded");
          return;
        }
        this.logger.warn({ attempt, errorCode: result.errorCode, remaining: result.remaining.length }, "controlled shutdown incomplete; retrying");
      } catch (e) {
        this.logger.warn({ attempt, err: (e as Error).message }, "controlled shutdown request failed; retrying");
      }
    }
    this.logger.warn({}, "controlled shutdown failed; shutting down anyway");
  }

  private async askControllerToShutDown(epoch: bigint): Promise<{ errorCode: number; remaining: unknown[] } | null> {
    if (this.services.metadata.aliveBrokers().every((b) => b.id === this.brokerId)) return null;
    if (this.controller.isActive) return await this.controller.controlledShutdown(this.brokerId, epoch);
    const endpoint = this.network.local.brokerEndpoint(this.services.metadata.controllerId);
    if (endpoint === undefined) throw new Error(`controller ${this.services.metadata.controllerId} is not known`);
    return await requestControlledShutdown(
      this.platform,
      endpoint,
      this.brokerId,
      epoch,
      this.config.replication.controllerSocketTimeoutMs,
      this.config.security.interBrokerSasl ?? undefined,
      this.network.interBrokerTls,
    );
  }

  private async stop(): Promise<void> {
    this.logger.info({}, "broker shutting down");
    this.stopReRegistering();
    if (this.config.replication.controlledShutdownEnable && !this.failed) await this.controlledShutdown();
    // A controller that just moved leaderships (its own controlled shutdown) lets its LeaderAndIsr
    // requests reach the new leaders before it resigns, which would drop them.
    if (this.controller.isActive && !(await this.network.channel.drained(CONTROLLER_DRAIN_MS))) {
      this.logger.warn({ pending: this.network.channel.pending }, "resigning with controller requests unanswered");
    }
    await this.controller.shutdown();
    await this.network.channel.shutdown();
    await this.network.fetchers.shutdown();
    await this.configWatcher.shutdown();
    await aclStoreOf(this.services.authorizer)?.shutdown();
    for (const w of this.network.tlsWatchers) w.stop();
    await this.server.stop();
    this.services.coordinator.shutdown();
    this.services.txnCoordinator?.shutdown();
    this.services.txnMarkerSender?.shutdown();
    this.services.txnVerifyConnections?.shutdown();
    this.services.replicaManager.shutdown();
    await this.logManager.shutdownGradually();
    try {
      await this.registry.delete(BrokerIdZNode.path(this.brokerId));
    } catch {
      // The session end removes it anyway.
    }
    this.logger.info({}, "broker stopped");
  }
}

/** The SocketServer's connection limits in a (merged static and dynamic) config. */
function connectionLimitsOf(config: BrokerConfig): ConnectionLimits {
  return {
    maxConnections: config.maxConnections,
    maxConnectionsPerIp: config.maxConnectionsPerIp,
    maxConnectionsPerIpOverrides: config.maxConnectionsPerIpOverrides,
    maxConnectionCreationRate: config.maxConnectionCreationRate,
    listenerLimits: config.listenerConnectionLimits,
  };
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
): Promise<bigint> {
  const endpoints = config.advertisedListeners.map((l) => {
    const boundPort = bound.find((b) => b.name === l.name)?.port ?? l.port;
    const host = l.host === "" || l.host === "0.0.0.0" || l.host === "::" ? platform.process.hostname() : l.host;
    const securityProtocol = config.security.listeners.get(l.name)?.protocol ?? "PLAINTEXT";
    return { listenerName: l.name, securityProtocol, host, port: l.port === 0 ? boundPort : l.port };
  });
  const data = BrokerIdZNode.encode({ endpoints, rack: config.rack }, platform.clock.nowMs());
  try {
    await registry.create(BrokerIdZNode.path(brokerId), data, "ephemeral");
    const stat = await registry.exists(BrokerIdZNode.path(brokerId));
    return stat?.czxid ?? -1n;
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NodeExists") {
      // Ours already (a retried create): fine, as Kafka's checkedEphemeralCreate.
      const stat = await registry.exists(BrokerIdZNode.path(brokerId));
      if (stat !== null && stat.ephemeralOwner === registry.sessionId) return stat.czxid;
      const owner = stat === null ? "" : ` (session 0x${stat.ephemeralOwner.toString(16)})`;
      throw new BrokerStartupError(
        `broker.id ${brokerId} is already registered at ${BrokerIdZNode.path(brokerId)} by a live broker${owner}; ` +
          `each broker needs its own broker.id (a broker that just crashed holds it until its session times out)`,
      );
    }
    throw e;
  }
}
