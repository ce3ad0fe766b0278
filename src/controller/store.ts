// ControllerStore: the active controller's writes to the registry, each fenced on the controller
// epoch as Kafka's KafkaZkClient does it: a multi whose first op checks /controller_epoch at the
// version this controller's election wrote. A controller deposed by a newer election (which
// bumped that version) gets ControllerMovedError and writes nothing.
//
// Partition state writes are also conditional on the state znode's version (the partition
// epoch), so the controller never overwrites an ISR change a leader made that it has not read.

import {
  ControllerEpochZNode,
  type LeaderIsrAndControllerEpoch,
  LeaderRecoveryState,
  type Op,
  type OpResult,
  type Registry,
  RegistryError,
  type ReplicaAssignment,
  TopicPartitionStateZNode,
  TopicPartitionsZNode,
  TopicPartitionZNode,
  TopicZNode,
  type Watcher,
} from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { partitionWritesInFlightMax, TimeSlice } from "../util/mod.ts";

/** This controller's epoch is no longer the registry's: another controller was elected since. */
export class ControllerMovedError extends Error {
  override name = "ControllerMovedError";
}

export class ControllerStore {
  constructor(private readonly registry: Registry, readonly epochZkVersion: number) {}

  private get fence(): Op {
    return { op: "check", path: ControllerEpochZNode.path, version: this.epochZkVersion };
  }

  /** ops after the epoch check, all or none; ControllerMovedError when the check fails. */
  async multi(ops: Op[]): Promise<OpResult[]> {
    try {
      return (await this.registry.multi([this.fence, ...ops])).slice(1);
    } catch (e) {
      if (e instanceof RegistryError && e.path === ControllerEpochZNode.path && (e.code === "BadVersion" || e.code === "NoNode")) {
        throw new ControllerMovedError(`controller epoch znode version is no longer ${this.epochZkVersion} (${e.code})`);
      }
      throw e;
    }
  }

  /** Creates path (persistent, empty) unless it exists; its parent must exist. */
  async ensure(path: string): Promise<void> {
    try {
      await this.multi([{ op: "create", path, data: new Uint8Array(0) }]);
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
    }
  }

  /**
   * Creates a new partition's state znode (and its parent /partitions/<p>); the new partition
   * epoch is 0. NodeExists when the state is there already.
   */
  async createState(state: PartitionState): Promise<number> {
    const partitionsDir = TopicPartitionsZNode.path(state.topic);
    const dir = TopicPartitionZNode.path(state.topic, state.partition);
    const create: Op = { op: "create", path: TopicPartitionStateZNode.path(state.topic, state.partition), data: encodeState(state) };
    // One round trip in the common case: the topic's /partitions exists, this partition's does not.
    try {
      await this.multi([{ op: "create", path: dir, data: new Uint8Array(0) }, create]);
      return 0;
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
      if (e.code === "NoNode" && e.path === dir) await this.ensure(partitionsDir);
      else if (!(e.code === "NodeExists" && e.path === dir)) throw e;
    }
    await this.ensure(dir);
    await this.multi([create]);
    return 0;
  }

  /** Writes state if the znode is still at `expectedVersion`; the new partition epoch. BadVersion otherwise. */
  async setState(state: PartitionState, expectedVersion: number): Promise<number> {
    const path = TopicPartitionStateZNode.path(state.topic, state.partition);
    const [r] = await this.multi([{ op: "setData", path, data: encodeState(state), version: expectedVersion }]);
    return (r as { stat: { version: number } }).stat.version;
  }

  async readState(topic: string, partition: number, watch?: Watcher): Promise<LeaderIsrAndControllerEpoch | null> {
    try {
      const { data, stat } = await this.registry.getData(TopicPartitionStateZNode.path(topic, partition), watch);
      return TopicPartitionStateZNode.decode(data, stat);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return null;
      throw e;
    }
  }

  /** Rewrites a topic's assignment if its znode is still at `expectedVersion`; the new version. */
  async setAssignment(
    topic: string,
    topicId: Uint8Array | null,
    assignment: ReadonlyMap<number, ReplicaAssignment>,
    expectedVersion: number,
  ): Promise<number> {
    const data = TopicZNode.encode(topicId, assignment);
    const [r] = await this.multi([{ op: "setData", path: TopicZNode.path(topic), data, version: expectedVersion }]);
    return (r as { stat: { version: number } }).stat.version;
  }

  async setData(path: string, data: Uint8Array): Promise<void> {
    await this.multi([{ op: "setData", path, data, version: -1 }]);
  }

  /** Deletes path (no error when it is gone already). */
  async delete(path: string): Promise<void> {
    try {
      await this.multi([{ op: "delete", path, version: -1 }]);
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
    }
  }

  /**
   * Deletes path and everything under it, children first; missing nodes are fine. Siblings go
   * together, a slice at a time (one group commit or ZooKeeper round trip for many), and the
   * event loop is given back between slices: a topic has up to 10,000 partitions.
   */
  async deleteRecursive(path: string, slice = new TimeSlice()): Promise<void> {
    let children: string[];
    try {
      children = await this.registry.getChildren(path);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return;
      throw e;
    }
    for (let i = 0; i < children.length;) {
      const batch: Promise<void>[] = [];
      const size = slice.groupSize(partitionWritesInFlightMax);
      do batch.push(this.deleteRecursive(`${path}/${children[i++]}`, slice)); while (i < children.length && batch.length < size && !slice.due);
      await slice.settle(batch);
      await slice.yield();
    }
    await this.delete(path);
  }
}

export function encodeState(s: PartitionState): Uint8Array {
  return TopicPartitionStateZNode.encode({
    leaderAndIsr: { leader: s.leader, leaderEpoch: s.leaderEpoch, isr: s.isr, leaderRecoveryState: LeaderRecoveryState.RECOVERED },
    controllerEpoch: s.controllerEpoch,
  });
}
