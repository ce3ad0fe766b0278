// Wires the group coordinator to this broker: its __consumer_offsets log (through the
// ReplicaManager, bypassing the produce path's refusal of internal topics), its leadership of
// the offsets partitions, and the creation of __consumer_offsets on first use.

import { Coordinator, OFFSETS_TOPIC, type OffsetsTopicLog } from "../coordinator/mod.ts";
import type { TopicAdmin } from "../controller/mod.ts";
import type { Platform } from "../platform/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import { ErrorCode, type Logger } from "../util/mod.ts";
import type { BrokerConfig } from "./config.ts";
import type { MetadataCache } from "./metadata_cache.ts";

/** How long a FindCoordinator waits for an internal topic (__consumer_offsets, __transaction_state) to be created before answering. */
const OFFSETS_TOPIC_CREATE_WAIT_MS = 5000;
/** Kafka's offsets.commit.timeout.ms default: how long a commit waits for the ISR. */
const OFFSETS_COMMIT_TIMEOUT_MS = 5000;

/** A coordinator's internal topic (__consumer_offsets, __transaction_state) as its log. */
export class ReplicaTopicLog implements OffsetsTopicLog {
  constructor(
    private readonly replicaManager: ReplicaManager,
    private readonly topic: string,
    private readonly maxMessageBytes: number,
    private readonly appendTimeoutMs: number,
  ) {}

  /**
   * Appends as a producer with acks=all would (Kafka's offsets.commit.required.acks, and the
   * transaction log's enforced acks=-1): the answer waits until the ISR has the batch, so a
   * change acknowledged survives a leader change.
   */
  async append(partition: number, batch: Uint8Array): Promise<number> {
    const r = this.replicaManager.appendToPartition(this.topic, partition, batch, this.maxMessageBytes, false, -1);
    if (r.errorCode !== ErrorCode.NONE) return r.errorCode;
    const [code] = await this.replicaManager.awaitReplication(
      [{ topic: this.topic, partition, requiredOffset: r.nextOffset }],
      this.appendTimeoutMs,
    );
    return code;
  }

  read(partition: number, offset: number, maxBytes: number) {
    const p = this.replicaManager.getPartition(this.topic, partition);
    // An offline partition (failed log dir) has no readable log: as if it were not here.
    if (p === undefined || this.replicaManager.isOffline(this.topic, partition)) return null;
    const r = p.log.read(Math.max(offset, p.log.logStartOffset), maxBytes, true);
    return { records: r.records, logEndOffset: r.logEndOffset };
  }

  logStartOffset(partition: number): number {
    return this.replicaManager.getPartition(this.topic, partition)?.log.logStartOffset ?? 0;
  }

  nextSequence(partition: number, producerId: bigint, producerEpoch: number): number {
    const entry = this.replicaManager.getPartition(this.topic, partition)?.log.producerState.lastEntry(producerId);
    const last = entry?.batches.at(-1);
    if (entry === undefined || last === undefined || entry.producerEpoch !== producerEpoch) return 0;
    // int32 sequences wrap to 0, as the leader's check expects.
    return last.lastSeq === 0x7fff_ffff ? 0 : last.lastSeq + 1;
  }
}

export function createCoordinator(
  platform: Platform,
  config: BrokerConfig,
  replicaManager: ReplicaManager,
  logger: Logger,
): Coordinator {
  const randomHex = () => {
    const b = new Uint8Array(16);
    platform.randomBytes(b);
    const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  // The coordinator's own batches may hold a whole group's assignment: allow them the topic's size.
  const log = new ReplicaTopicLog(
    replicaManager,
    OFFSETS_TOPIC,
    Math.max(config.messageMaxBytes, config.groupCoordinator.offsetsTopicSegmentBytes),
    OFFSETS_COMMIT_TIMEOUT_MS,
  );
  const coordinator = new Coordinator(log, config.groupCoordinator, platform.clock, logger.child({ component: "group-coordinator" }), randomHex);
  // A transaction marker written here as leader of an offsets partition ends the producer's
  // transactional offsets there (Kafka's onTransactionCompleted after WriteTxnMarkers).
  replicaManager.onTxnMarker = (topic, partition, producerId, committed) => {
    if (topic === OFFSETS_TOPIC) coordinator.onTxnMarker(partition, producerId, committed);
  };
  replicaManager.leadershipListeners.push((topic, partition, isLeader) => {
    if (topic !== OFFSETS_TOPIC) return;
    if (isLeader) {
      coordinator.onElection(partition).catch((e) => logger.error({ partition, err: String(e) }, "loading offsets partition failed"));
    } else coordinator.onResignation(partition);
  });
  return coordinator;
}

/**
 * Makes sure __consumer_offsets exists, creating it as Kafka does (compacted, with the offsets.*
 * settings). The replication factor is capped at the live brokers so a single node works out of
 * the box (Kafka instead refuses until enough brokers are up); the cap is logged.
 */
export function offsetsTopicEnsurer(
  config: BrokerConfig,
  metadata: MetadataCache,
  topicAdmin: TopicAdmin,
  logger: Logger,
): () => Promise<boolean> {
  const gc = config.groupCoordinator;
  return internalTopicEnsurer({
    name: OFFSETS_TOPIC,
    numPartitions: gc.offsetsTopicNumPartitions,
    replicationFactor: gc.offsetsTopicReplicationFactor,
    replicationFactorKey: "offsets.topic.replication.factor",
    configs: () => ({
      "cleanup.policy": "compact",
      "compression.type": "producer",
      "segment.bytes": String(gc.offsetsTopicSegmentBytes),
    }),
  }, metadata, topicAdmin, logger);
}

export interface InternalTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  /** The config key the replication factor comes from (named when it is capped). */
  replicationFactorKey: string;
  /** The topic's configs, given the replication factor it is created with. */
  configs: (replicationFactor: number) => Record<string, string>;
}

/**
 * Makes sure an internal topic exists, creating it on first use (one creation at a time; a failed
 * one is tried again by the next caller). The replication factor is capped at the live brokers.
 */
export function internalTopicEnsurer(
  spec: InternalTopicSpec,
  metadata: MetadataCache,
  topicAdmin: TopicAdmin,
  logger: Logger,
): () => Promise<boolean> {
  let creating: Promise<boolean> | null = null;
  return () => {
    if (metadata.getTopic(spec.name) !== undefined) return Promise.resolve(true);
    creating ??= (async () => {
      const live = Math.max(1, metadata.aliveBrokers().length);
      const rf = Math.min(spec.replicationFactor, live);
      if (rf < spec.replicationFactor) {
        logger.warn({ topic: spec.name, configured: spec.replicationFactor, used: rf }, `${spec.replicationFactorKey} capped at the live brokers`);
      }
      let r;
      try {
        r = await topicAdmin.createTopic({
          name: spec.name,
          numPartitions: spec.numPartitions,
          replicationFactor: rf,
          assignment: null,
          configs: spec.configs(rf),
        }, false, OFFSETS_TOPIC_CREATE_WAIT_MS);
      } catch (e) {
        // (ZooKeeper out of reach.) Not kept: a rejected promise left in `creating` would answer
        // every later caller with the same failure until a restart.
        logger.warn({ reason: e instanceof Error ? e.message : String(e) }, `could not create ${spec.name}`);
        return false;
      } finally {
        creating = null;
      }
      const ok = r.errorCode === ErrorCode.NONE || r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS;
      if (!ok) logger.warn({ errorCode: r.errorCode, reason: r.errorMessage }, `could not create ${spec.name}`);
      return ok && metadata.getTopic(spec.name) !== undefined;
    })();
    return creating;
  };
}
