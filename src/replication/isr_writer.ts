// The partition leader's ISR writes, as Kafka's ZooKeeper-mode leaders made them before AlterIsr
// (used below inter.broker.protocol.version 2.7 and on a single node; broker/
// alter_partition_sender.ts proposes them to the controller otherwise):
// the state znode is rewritten with the new ISR, conditional on the version the leader last
// saw (its partitionEpoch), and a persistent-sequential /isr_change_notification/isr_change_
// node tells the controller, which re-reads the state and passes it on in UpdateMetadata.
//
// A lost condition (BadVersion: the controller, or a previous leader, wrote since) is not an
// error: the leader keeps the ISR it had and the controller's next LeaderAndIsr brings the state
// that won. Any other failure (the embedded registry's disk full, a lost ZooKeeper connection)
// leaves the ISR as it was and answers "retry": the leader tries again after
// isrChangeRetryBackoffMs (Kafka retries AlterPartition). A notification that could not be
// written after its state was is kept and written again at the ReplicaManager's next ISR check
// (retryPending) until it is (Kafka's ReplicaManager keeps its isrChangeSet until
// propagateIsrChanges succeeds), so the controller always hears of a change. Failures are said at warn, at most once per
// storageErrorLogIntervalMs with the count of those not said.

import {
  IsrChangeNotificationSequenceZNode,
  IsrChangeNotificationZNode,
  LeaderRecoveryState,
  type Registry,
  RegistryError,
  TopicPartitionStateZNode,
} from "../registry/mod.ts";
import { type Logger, storageErrorLogIntervalMs } from "../util/mod.ts";
import type { IsrWriter, PartitionState } from "./partition.ts";

export function registryIsrWriter(registry: Registry, logger: Logger, monotonicMs: () => number = () => Infinity): IsrWriter {
  /** States written whose notification is not yet: written again by retryPending. */
  let unannounced: PartitionState[] = [];
  let retrying = false;
  const warned = { lastMs: -Infinity, suppressed: 0 };
  const warn = (fields: Record<string, unknown>, msg: string) => {
    const now = monotonicMs();
    if (now - warned.lastMs < storageErrorLogIntervalMs) {
      warned.suppressed++;
      return;
    }
    logger.warn({ ...fields, notSaidSinceLast: warned.suppressed }, msg);
    warned.lastMs = now;
    warned.suppressed = 0;
  };

  const announce = async (states: PartitionState[]): Promise<boolean> => {
    try {
      await registry.ensurePath(IsrChangeNotificationZNode.path);
      await registry.create(IsrChangeNotificationSequenceZNode.path(), IsrChangeNotificationSequenceZNode.encode(states), "persistent-sequential");
      return true;
    } catch (e) {
      warn({ partitions: states.map((s) => `${s.topic}-${s.partition}`), err: (e as Error).message }, "ISR change notification not written; trying again");
      return false;
    }
  };
  const retryPending = () => {
    if (retrying || unannounced.length === 0) return;
    retrying = true;
    const states = unannounced;
    unannounced = [];
    void announce(states).then((ok) => {
      retrying = false;
      if (ok) logger.info({ partitions: states.length }, "ISR change notifications written");
      else unannounced.push(...states);
    });
  };

  const write = async (state: PartitionState, newIsr: number[]): Promise<number | null | "retry"> => {
    const path = TopicPartitionStateZNode.path(state.topic, state.partition);
    const data = TopicPartitionStateZNode.encode({
      leaderAndIsr: { leader: state.leader, leaderEpoch: state.leaderEpoch, isr: newIsr, leaderRecoveryState: LeaderRecoveryState.RECOVERED },
      controllerEpoch: state.controllerEpoch,
    });
    let version: number;
    try {
      version = (await registry.setData(path, data, state.partitionEpoch)).version;
    } catch (e) {
      if (e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NoNode")) {
        logger.info({ topic: state.topic, partition: state.partition, isr: newIsr, partitionEpoch: state.partitionEpoch, reason: e.code }, "ISR change not written");
        return null;
      }
      warn({ topic: state.topic, partition: state.partition, isr: newIsr, err: (e as Error).message }, "ISR change not written; the leader tries again");
      return "retry";
    }
    logger.info({ topic: state.topic, partition: state.partition, isr: newIsr, was: state.isr, partitionEpoch: version }, "ISR changed");
    const written = { ...state, isr: newIsr, partitionEpoch: version };
    if (!(await announce([written]))) unannounced.push(written);
    return version;
  };
  return Object.assign(write, { retryPending });
}
