// MetadataCache: what this broker knows of the cluster, as the controller last told it
// (UpdateMetadata): live brokers with their endpoints, topics with ids and partition states, the
// controller id and the cluster id. Metadata, ListOffsets and the topic handlers read it; only
// updateMetadata / removeTopic change it. Waiters let CreateTopics / DeleteTopics answer once
// the change has reached this broker.
//
// Topic config overrides have two writers: the controller (with the topic's partition state) and
// the ConfigChangeWatcher (after an AlterConfigs). Each read of /config/topics/<t> is tagged
// with the node's mzxid, and the newer read wins, so a controller message carrying configs it
// read before a change cannot undo that change here.

import type { PartitionState } from "../replication/mod.ts";
import { bytesEqual, ErrorCode, uuidToString, zeroUuid } from "../util/mod.ts";

export interface BrokerEndpoint {
  id: number;
  /** On the inter-broker listener. */
  host: string;
  port: number;
  rack: string | null;
  /** Every listener's endpoint; absent when the controller sent only one (then host/port serve all). */
  endpoints?: { listener: string; host: string; port: number }[];
}

export interface TopicMetadata {
  name: string;
  topicId: Uint8Array;
  isInternal: boolean;
  partitions: PartitionState[];
  configs: Record<string, string>;
}

export class MetadataCache {
  clusterId = "";
  controllerId = -1;
  private brokers = new Map<number, BrokerEndpoint>();
  private topics = new Map<string, TopicMetadata>();
  /** The same topics by id (uuidToString), for Fetch v13+ and lookups by id. */
  private topicsById = new Map<string, TopicMetadata>();
  private topicConfigs = new Map<string, { configs: Record<string, string>; zxid: bigint }>();
  private waiters = new Set<() => void>();

  constructor(readonly localBrokerId: number) {}

  setBrokers(brokers: BrokerEndpoint[]): void {
    this.brokers = new Map(brokers.map((b) => [b.id, b]));
    this.notify();
  }

  aliveBrokers(): BrokerEndpoint[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }

  getBroker(id: number): BrokerEndpoint | undefined {
    return this.brokers.get(id);
  }

  /**
   * Where a client that came in on `listener` reaches broker `id` (Kafka answers each client with
   * the endpoints of its own listener); undefined when the broker is not alive or lacks it.
   */
  endpointFor(id: number, listener: string): { id: number; host: string; port: number; rack: string | null } | undefined {
    const b = this.brokers.get(id);
    if (b === undefined) return undefined;
    if (b.endpoints === undefined) return b;
    const e = b.endpoints.find((x) => x.listener === listener);
    return e === undefined ? undefined : { id: b.id, host: e.host, port: e.port, rack: b.rack };
  }

  /** The live brokers that have `listener`, with its endpoint, by id. */
  brokersOn(listener: string): { id: number; host: string; port: number; rack: string | null }[] {
    return this.aliveBrokers().map((b) => this.endpointFor(b.id, listener)).filter((b) => b !== undefined);
  }

  updateTopic(t: TopicMetadata): void {
    this.setTopic(t);
    this.notify();
  }

  private setTopic(t: TopicMetadata): void {
    this.unindex(t.name);
    this.topics.set(t.name, t);
    // A topic created without an id (zero: made by an old tool) cannot be looked up by id.
    if (!bytesEqual(t.topicId, zeroUuid)) this.topicsById.set(uuidToString(t.topicId), t);
  }

  private unindex(name: string): void {
    const old = this.topics.get(name);
    if (old === undefined) return;
    const key = uuidToString(old.topicId);
    if (this.topicsById.get(key)?.name === name) this.topicsById.delete(key);
  }

  removeTopic(name: string): void {
    this.unindex(name);
    this.topics.delete(name);
    this.topicConfigs.delete(name);
    this.notify();
  }

  /**
   * Offers a topic's config overrides as read from the registry at `zxid`; keeps them unless a
   * newer read is already known. Returns the overrides now in force.
   */
  /** True when configs read from the registry (not just "none known") are held for the topic. */
  hasTopicConfigs(name: string): boolean {
    return (this.topicConfigs.get(name)?.zxid ?? -1n) >= 0n;
  }

  /** The topic's overrides as last known here (none when nothing is known). */
  topicOverrides(name: string): Record<string, string> {
    return this.topicConfigs.get(name)?.configs ?? this.topics.get(name)?.configs ?? {};
  }

  offerTopicConfigs(name: string, configs: Record<string, string>, zxid: bigint): Record<string, string> {
    const known = this.topicConfigs.get(name);
    if (known !== undefined && known.zxid > zxid) return known.configs;
    this.topicConfigs.set(name, { configs, zxid });
    const t = this.topics.get(name);
    if (t !== undefined) this.setTopic({ ...t, configs });
    return configs;
  }

  getTopic(name: string): TopicMetadata | undefined {
    return this.topics.get(name);
  }

  /**
   * One partition's state. Partitions are kept in id order from 0, so the id is the index; the
   * scan is only for a list that is not (a request naming 1,000 partitions costs 1,000 lookups,
   * not 1,000 scans).
   */
  getPartition(topic: string, partition: number): PartitionState | undefined {
    const ps = this.topics.get(topic)?.partitions;
    if (ps === undefined) return undefined;
    const atIndex = ps[partition];
    return atIndex?.partition === partition ? atIndex : ps.find((p) => p.partition === partition);
  }

  hasPartition(topic: string, partition: number): boolean {
    return this.getPartition(topic, partition) !== undefined;
  }

  /**
   * Kafka's ReplicaManager.getPartitionOrError for a partition with no replica here: a partition
   * the metadata knows answers NOT_LEADER_OR_FOLLOWER (the client looks elsewhere and retries; a
   * replica moving or a LeaderAndIsr on its way), only an unknown one UNKNOWN_TOPIC_OR_PARTITION.
   */
  notHostedError(topic: string, partition: number, code: number): number {
    return code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && this.hasPartition(topic, partition) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : code;
  }

  topicNames(): string[] {
    return [...this.topics.keys()].sort();
  }

  getTopicById(id: Uint8Array): TopicMetadata | undefined {
    return id.length === 16 ? this.topicsById.get(uuidToString(id)) : undefined;
  }

  /** Resolves true once cond() holds (checked after each change), false after timeoutMs. */
  waitUntil(cond: () => boolean, timeoutMs: number, setTimer: (fn: () => void, ms: number) => { cancel(): void }): Promise<boolean> {
    if (cond()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!cond()) return;
        this.waiters.delete(check);
        timer.cancel();
        resolve(true);
      };
      const timer = setTimer(() => {
        this.waiters.delete(check);
        resolve(cond());
      }, Math.max(0, timeoutMs));
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
