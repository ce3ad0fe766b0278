// ZkTopicAdmin: creates and deletes topics as Kafka's AdminZkClient does, by writing the registry
// (any broker may do this; the controller reacts to the znodes), then waiting until this broker's
// metadata shows the result. Validation follows Kafka's rules and wording.

import { checkTopicConfig } from "../log/mod.ts";
import type { Platform } from "../platform/mod.ts";
import {
  ConfigEntityZNode,
  ConfigType,
  DeleteTopicsTopicZNode,
  type Registry,
  RegistryError,
  TopicZNode,
} from "../registry/mod.ts";
import { randomUuid, ErrorCode, partitionsPerTopicMax } from "../util/mod.ts";
import { assignmentError, assignReplicas } from "./assignment.ts";
import { collidingTopic, topicNameError } from "./topic_names.ts";
import { readLiveBrokers, readTopicNames } from "./zk_reads.ts";

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

/** Topic creation and deletion as Kafka's AdminZkClient does it: through the registry. */
export interface TopicAdmin {
  createTopic(spec: CreateTopicSpec, validateOnly: boolean, timeoutMs: number): Promise<TopicOutcome>;
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
  ) {}

  async createTopic(spec: CreateTopicSpec, validateOnly: boolean, timeoutMs: number): Promise<TopicOutcome> {
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
    const brokers = (await readLiveBrokers(this.registry)).map((b) => b.id);
    let assignment = spec.assignment;
    if (assignment !== null) {
      const why = assignmentError(assignment, new Set(brokers));
      if (why !== null) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, why);
    } else {
      if (spec.replicationFactor > brokers.length) {
        return fail(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Replication factor: ${spec.replicationFactor} larger than available brokers: ${brokers.length}.`,
        );
      }
      assignment = assignReplicas(brokers, spec.numPartitions, spec.replicationFactor, this.random(brokers.length), this.random(brokers.length));
    }
    if (validateOnly) return ok;
    const replicas = new Map([...assignment].map(([p, r]) => [p, { replicas: r, addingReplicas: [], removingReplicas: [] }]));
    const topicId = randomUuid((b) => this.platform.randomBytes(b));
    try {
      await this.registry.multi([
        {
          op: "create",
          path: ConfigEntityZNode.path(ConfigType.Topic, spec.name),
          data: ConfigEntityZNode.encode(new Map(Object.entries(spec.configs))),
        },
        { op: "create", path: TopicZNode.path(spec.name), data: TopicZNode.encode(topicId, replicas) },
      ]);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NodeExists") {
        return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${spec.name}' already exists.`);
      }
      throw e;
    }
    const n = assignment.size;
    const ready = await this.metadata.waitUntil(
      () => (this.metadata.getTopic(spec.name)?.partitions.length ?? 0) === n,
      timeoutMs,
      (fn, ms) => this.platform.clock.setTimeout(fn, ms),
    );
    return ready ? ok : fail(ErrorCode.REQUEST_TIMED_OUT, `Topic '${spec.name}' was created but is not ready yet`);
  }

  async deleteTopic(name: string, timeoutMs: number): Promise<TopicOutcome> {
    const existing = await readTopicNames(this.registry);
    if (!existing.includes(name)) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.");
    try {
      await this.registry.create(DeleteTopicsTopicZNode.path(name), DeleteTopicsTopicZNode.encode());
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
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
