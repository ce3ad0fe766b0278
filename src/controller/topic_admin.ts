// ZkTopicAdmin: creates and deletes topics as Kafka's AdminZkClient does, by writing the registry
// (any broker may do this; the controller reacts to the znodes), then waiting until this broker's
// metadata shows the result. Validation follows Kafka's rules and wording.

import { checkTopicConfig, checkTopicConfigSet } from "../log/mod.ts";
import type { Platform } from "../platform/mod.ts";
import {
  ConfigEntityZNode,
  ConfigType,
  DeleteTopicsTopicZNode,
  type Registry,
  RegistryError,
  type ReplicaAssignment,
  TopicZNode,
} from "../registry/mod.ts";
import { configWriteAttemptsMax, ErrorCode, KafkaError, type Logger, partitionsPerTopicMax, randomUuid, silentLogger, TimeSlice } from "../util/mod.ts";
import { assignmentError, assignReplicasToBrokers } from "./assignment.ts";
import { logRegistryWriteFailure, registryWriteFailure } from "./registry_failure.ts";
import { collidingTopic, topicNameError } from "./topic_names.ts";
import { getDataOrNull, readLiveBrokers, readTopicNames } from "./zk_reads.ts";

export interface TopicOutcome {
  errorCode: number;
  errorMessage: string | null;
}

export interface CreateTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  /** Explicit replica assignment by partition, or null to let the controller's rules assign. */
  assignment: Map<number, number[]> | null;
  configs: Record<string, string>;
}

/** Topic creation, partition addition and deletion as Kafka's AdminZkClient does them: through the registry. */
/**
 * Asked, once a create has been validated and before it is written, whether this many partitions
 * may be mutated (the controller mutation quota); an outcome refuses it. Not asked for validate_only.
 */
export type MutationAdmit = (partitions: number) => TopicOutcome | null;

export interface TopicAdmin {
  createTopic(spec: CreateTopicSpec, validateOnly: boolean, timeoutMs: number, admit?: MutationAdmit): Promise<TopicOutcome>;
  /**
   * Raises the topic's partition count to `count`; `assignment` gives the replicas of each new
   * partition (in order), or null to assign them as Kafka does. Waits up to timeoutMs for this
   * broker's metadata to show them (0: does not wait).
   */
  createPartitions(
    topic: string,
    count: number,
    assignment: number[][] | null,
    validateOnly: boolean,
    timeoutMs: number,
    admit?: MutationAdmit,
  ): Promise<TopicOutcome>;
  deleteTopic(name: string, timeoutMs: number): Promise<TopicOutcome>;
}

/** What the admin needs of the broker's metadata: to see a change arrive. */
export interface TopicMetadataView {
  getTopic(name: string): { partitions: unknown[] } | undefined;
  waitUntil(cond: () => boolean, timeoutMs: number, setTimer: (fn: () => void, ms: number) => { cancel(): void }): Promise<boolean>;
}

const ok: TopicOutcome = { errorCode: ErrorCode.NONE, errorMessage: null };
const fail = (errorCode: number, errorMessage: string): TopicOutcome => ({ errorCode, errorMessage });

export class ZkTopicAdmin implements TopicAdmin {
  constructor(
    private readonly platform: Platform,
    private readonly registry: Registry,
    private readonly metadata: TopicMetadataView,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** A registry write refused for lack of disk (or a failed disk): logged, answered KAFKA_STORAGE_ERROR. */
  private storageFailure(e: unknown, what: string, fields: Record<string, unknown>): TopicOutcome | null {
    const f = registryWriteFailure(e, what);
    if (f === null) return null;
    logRegistryWriteFailure(this.logger, f, fields, this.platform.clock.monotonicMs());
    return fail(f.errorCode, f.errorMessage);
  }

  async createTopic(spec: CreateTopicSpec, validateOnly: boolean, timeoutMs: number, admit?: MutationAdmit): Promise<TopicOutcome> {
    const nameError = topicNameError(spec.name);
    if (nameError !== null) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    const existing = await readTopicNames(this.registry);
    if (existing.includes(spec.name)) return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${spec.name}' already exists.`);
    const collides = collidingTopic(spec.name, existing);
    if (collides !== null) {
      return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${spec.name}' collides with existing topic: ${collides}`);
    }
    if (spec.numPartitions < 1) return fail(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.");
    if (spec.numPartitions > partitionsPerTopicMax) {
      return fail(ErrorCode.INVALID_PARTITIONS, `Number of partitions ${spec.numPartitions} is above the limit ${partitionsPerTopicMax}.`);
    }
    if (spec.replicationFactor < 1) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.");
    for (const [k, v] of Object.entries(spec.configs)) {
      const why = checkTopicConfig(k, v);
      if (why !== null) return fail(ErrorCode.INVALID_CONFIG, why);
    }
    const inconsistent = checkTopicConfigSet(spec.configs);
    if (inconsistent !== null) return fail(ErrorCode.INVALID_CONFIG, inconsistent);
    const brokers = await readLiveBrokers(this.registry);
    let assignment = spec.assignment;
    if (assignment !== null) {
      const why = assignmentError(assignment, new Set(brokers.map((b) => b.id)));
      if (why !== null) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, why);
    } else {
      try {
        assignment = assignReplicasToBrokers(brokers, spec.numPartitions, spec.replicationFactor, -1, 0, (n) => this.random(n));
      } catch (e) {
        if (e instanceof KafkaError) return fail(e.code, kafkaErrorMessage(e));
        throw e;
      }
    }
    if (validateOnly) return ok;
    const refused = admit?.(assignment.size) ?? null;
    if (refused !== null) return refused;
    // The event loop is given back between the pieces of a large topic (issue 11's 50 ms bound):
    // nothing is checked here that a yield could make stale (the create fails on NodeExists).
    const slice = new TimeSlice();
    await slice.yield();
    const replicas = new Map<number, ReplicaAssignment>();
    for (const [p, r] of assignment) replicas.set(p, { replicas: r, addingReplicas: [], removingReplicas: [] });
    await slice.yield();
    const topicId = randomUuid((b) => this.platform.randomBytes(b));
    const topicData = await TopicZNode.encodeGradually(topicId, replicas, slice);
    await slice.yield();
    try {
      await this.registry.multi([
        {
          op: "create",
          path: ConfigEntityZNode.path(ConfigType.Topic, spec.name),
          data: ConfigEntityZNode.encode(new Map(Object.entries(spec.configs))),
        },
        { op: "create", path: TopicZNode.path(spec.name), data: topicData },
      ]);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NodeExists") {
        return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${spec.name}' already exists.`);
      }
      // The registry could not store it (the embedded registry's disk is full): nothing was
      // created (the multi is undone whole).
      return this.storageFailure(e, `Topic '${spec.name}' was not created`, { topic: spec.name }) ?? throwIt(e);
    }
    const n = assignment.size;
    const ready = await this.metadata.waitUntil(
      () => (this.metadata.getTopic(spec.name)?.partitions.length ?? 0) === n,
      timeoutMs,
      (fn, ms) => this.platform.clock.setTimeout(fn, ms),
    );
    return ready ? ok : fail(ErrorCode.REQUEST_TIMED_OUT, `Topic '${spec.name}' was created but is not ready yet`);
  }

  /**
   * Kafka's ZkAdminManager.createPartitions: validates against the topic znode as read, writes
   * the extended assignment conditional on that read's version (a concurrent change starts it
   * over), and the controller, watching the znode, creates the new partitions.
   */
  async createPartitions(
    topic: string,
    count: number,
    assignment: number[][] | null,
    validateOnly: boolean,
    timeoutMs: number,
    admit?: MutationAdmit,
  ): Promise<TopicOutcome> {
    if (topicNameError(topic) !== null) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${topic}' does not exist.`);
    for (let attempt = 0; attempt < configWriteAttemptsMax; attempt++) {
      const node = await getDataOrNull(this.registry, TopicZNode.path(topic));
      const current = node === null ? null : TopicZNode.decode(topic, node.data);
      if (node === null || current === null || current.assignment.size === 0) {
        return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${topic}' does not exist.`);
      }
      if ((await this.registry.exists(DeleteTopicsTopicZNode.path(topic))) !== null) {
        return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is queued for deletion.");
      }
      const planned = await this.planPartitions(topic, current.assignment, count, assignment);
      if ("errorCode" in planned) return planned;
      if (validateOnly) return ok;
      // Asked once: a retry after a concurrent change must not charge the quota again.
      if (attempt === 0) {
        const refused = admit?.(planned.size) ?? null;
        if (refused !== null) return refused;
      }
      const next = new Map(current.assignment);
      for (const [p, replicas] of planned) next.set(p, { replicas, addingReplicas: [], removingReplicas: [] });
      try {
        await this.registry.setData(TopicZNode.path(topic), TopicZNode.encode(current.topicId, next), node.stat.version);
      } catch (e) {
        if (e instanceof RegistryError && e.code === "BadVersion") continue;
        if (e instanceof RegistryError && e.code === "NoNode") return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${topic}' does not exist.`);
        // The assignment stays as it was: no partition was added.
        return this.storageFailure(e, `The partitions of topic '${topic}' were not created`, { topic, count }) ?? throwIt(e);
      }
      if (timeoutMs <= 0) return ok;
      const ready = await this.metadata.waitUntil(
        () => (this.metadata.getTopic(topic)?.partitions.length ?? 0) >= count,
        timeoutMs,
        (fn, ms) => this.platform.clock.setTimeout(fn, ms),
      );
      return ready ? ok : fail(ErrorCode.REQUEST_TIMED_OUT, `The partitions of topic '${topic}' were created but are not ready yet`);
    }
    return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `the topic ${topic} kept changing under this request; try again`);
  }

  /** The new partitions' replicas, or why not (Kafka's checks and wording). */
  private async planPartitions(
    topic: string,
    existing: Map<number, { replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }>,
    count: number,
    assignment: number[][] | null,
  ): Promise<Map<number, number[]> | TopicOutcome> {
    for (const a of existing.values()) {
      if (a.addingReplicas.length > 0 || a.removingReplicas.length > 0) {
        return fail(ErrorCode.REASSIGNMENT_IN_PROGRESS, `A partition reassignment is in progress for the topic '${topic}'.`);
      }
    }
    const old = existing.size;
    if (count < old) return fail(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${old} partitions, which is higher than the requested ${count}.`);
    if (count === old) return fail(ErrorCode.INVALID_PARTITIONS, `Topic already has ${old} partitions.`);
    if (count > partitionsPerTopicMax) {
      return fail(ErrorCode.INVALID_PARTITIONS, `Number of partitions ${count} is above the limit ${partitionsPerTopicMax}.`);
    }
    const partition0 = existing.get(0)?.replicas;
    if (partition0 === undefined || partition0.length === 0) {
      return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `Unexpected existing replica assignment for topic '${topic}', partition id 0 is missing.`);
    }
    const brokers = await readLiveBrokers(this.registry);
    const brokerIds = new Set(brokers.map((b) => b.id));
    const increment = count - old;
    if (assignment !== null) {
      const unknown = [...new Set(assignment.flat())].filter((b) => !brokerIds.has(b));
      if (unknown.length > 0) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Unknown broker(s) in replica assignment: ${unknown.join(", ")}.`);
      if (assignment.length !== increment) {
        return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Increasing the number of partitions by ${increment} but ${assignment.length} assignments provided.`);
      }
      const out = new Map<number, number[]>();
      for (let i = 0; i < assignment.length; i++) {
        const p = old + i;
        const replicas = assignment[i];
        if (replicas.length === 0) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Cannot have replication factor of 0 for partition id ${p}.`);
        if (new Set(replicas).size !== replicas.length) {
          return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Duplicate brokers not allowed in replica assignment: ${replicas.join(", ")} for partition id ${p}.`);
        }
        if (replicas.length !== partition0.length) {
          return fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `Inconsistent replication factor between partitions, partition 0 has ${partition0.length} while partition ${p} has ${replicas.length} replicas.`,
          );
        }
        out.set(p, replicas);
      }
      return out;
    }
    // New partitions continue the pattern: start at partition 0's first replica.
    const sorted = [...brokers].sort((a, b) => a.id - b.id);
    const startIndex = Math.max(0, sorted.findIndex((b) => b.id >= partition0[0]));
    try {
      return assignReplicasToBrokers(sorted, increment, partition0.length, startIndex, old, (n) => this.random(n));
    } catch (e) {
      if (e instanceof KafkaError) return fail(e.code, kafkaErrorMessage(e));
      throw e;
    }
  }

  async deleteTopic(name: string, timeoutMs: number): Promise<TopicOutcome> {
    const existing = await readTopicNames(this.registry);
    if (!existing.includes(name)) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.");
    try {
      await this.registry.create(DeleteTopicsTopicZNode.path(name), DeleteTopicsTopicZNode.encode());
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NodeExists")) {
        // Not queued for deletion: the topic stays whole.
        return this.storageFailure(e, `Topic '${name}' was not marked for deletion`, { topic: name }) ?? throwIt(e);
      }
    }
    const gone = await this.metadata.waitUntil(
      () => this.metadata.getTopic(name) === undefined,
      timeoutMs,
      (fn, ms) => this.platform.clock.setTimeout(fn, ms),
    );
    return gone ? ok : fail(ErrorCode.REQUEST_TIMED_OUT, `Topic '${name}' is marked for deletion but not deleted yet`);
  }

  private random(n: number): number {
    const b = new Uint8Array(4);
    this.platform.randomBytes(b);
    return new DataView(b.buffer).getUint32(0) % n;
  }
}

function throwIt(e: unknown): never {
  throw e;
}

/** A KafkaError's message without the error name its constructor puts in front. */
function kafkaErrorMessage(e: KafkaError): string {
  const colon = e.message.indexOf(": ");
  return colon >= 0 ? e.message.slice(colon + 2) : e.message;
}
