// The partition leader's ISR writes, as Kafka's ZooKeeper-mode leaders made them before AlterIsr:
// the state znode is rewritten with the new ISR, conditional on the version the leader last
// saw (its partitionEpoch), and a persistent-sequential /isr_change_notification/isr_change_
// node tells the controller, which re-reads the state and passes it on in UpdateMetadata.
//
// A lost condition (BadVersion: the controller, or a previous leader, wrote since) is not an
// error: the leader keeps the ISR it had and the controller's next LeaderAndIsr brings the state
// that won. Registry failures (a lost session) are also reported as "not written".

import {
  IsrChangeNotificationSequenceZNode,
  IsrChangeNotificationZNode,
  LeaderRecoveryState,
  type Registry,
  RegistryError,
  TopicPartitionStateZNode,
} from "../registry/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { IsrWriter } from "./partition.ts";

export function registryIsrWriter(registry: Registry, logger: Logger): IsrWriter {
  return async (state, newIsr) => {
    const path = TopicPartitionStateZNode.path(state.topic, state.partition);
    const data = TopicPartitionStateZNode.encode({
      leaderAndIsr: { leader: state.leader, leaderEpoch: state.leaderEpoch, isr: newIsr, leaderRecoveryState: LeaderRecoveryState.RECOVERED },
      controllerEpoch: state.controllerEpoch,
    });
    let version: number;
    try {
      version = (await registry.setData(path, data, state.partitionEpoch)).version;
    } catch (e) {
      const code = e instanceof RegistryError ? e.code : String(e);
      logger.info({ topic: state.topic, partition: state.partition, isr: newIsr, partitionEpoch: state.partitionEpoch, reason: code }, "ISR change not written");
      return null;
    }
    logger.info({ topic: state.topic, partition: state.partition, isr: newIsr, was: state.isr, partitionEpoch: version }, "ISR changed");
    try {
      await registry.ensurePath(IsrChangeNotificationZNode.path);
      await registry.create(IsrChangeNotificationSequenceZNode.path(), IsrChangeNotificationSequenceZNode.encode([state]), "persistent-sequential");
    } catch (e) {
      // The state is written; the controller learns it at its next read of the partition.
      logger.warn({ topic: state.topic, partition: state.partition, err: (e as Error).message }, "ISR change notification not written");
    }
    return version;
  };
}
