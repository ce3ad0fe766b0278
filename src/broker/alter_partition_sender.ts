// The partition leader's side of AlterPartition (56), Kafka's AlterPartitionManager: an ISR
// change is proposed to the active controller, over the inter-broker listener (to itself too when
// this broker is the controller, as Kafka sends it), and the partition takes the new ISR only
// once the controller has written it (replication/partition.ts's changeIsr keeps it pending till
// then). Used when inter.broker.protocol.version >= 2.7 in ZooKeeper mode
// (inter_broker_protocol.ts); otherwise the leader writes ZooKeeper itself (isr_writer.ts).
//
// Answers, as Kafka's Partition.handleAlterPartitionError treats them: NONE → the partition epoch
// written; FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION,
// UNKNOWN_TOPIC_ID, INELIGIBLE_REPLICA, NEW_LEADER_ELECTED, INVALID_REQUEST → null (the leader
// keeps its ISR and waits for the controller's next LeaderAndIsr or proposes again later); any
// other error, a top-level one (NOT_CONTROLLER, STALE_BROKER_EPOCH, ...) or no answer → "retry"
// after isrChangeRetryBackoffMs.
import { AlterPartitionApi } from "../protocol/mod.ts";
import type { IsrWriter, PartitionState } from "../replication/mod.ts";
import { bytesEqual, ErrorCode, type Logger, zeroUuid } from "../util/mod.ts";
import type { InterBrokerConnections } from "./txn_marker_sender.ts";

/** Topics by id (v2); v1 for a topic that has none (its assignment znode was written without). */
const VERSION_BY_ID = 2;
const VERSION_BY_NAME = 1;

const giveUp = new Set<number>([
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.INVALID_UPDATE_VERSION,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INELIGIBLE_REPLICA,
  ErrorCode.NEW_LEADER_ELECTED,
  ErrorCode.INVALID_REQUEST,
]);

export interface AlterPartitionSenderDeps {
  brokerId: number;
  /** The controller this broker knows of (-1: none). */
  controllerId: () => number;
  /** This broker's registration (czxid of /brokers/ids/<id>); -1 before it registered. */
  brokerEpoch: () => bigint;
  connections: InterBrokerConnections;
  logger: Logger;
}

/** An IsrWriter proposing each change to the controller; `sent` counts the requests made. */
export function alterPartitionIsrWriter(d: AlterPartitionSenderDeps): IsrWriter & { sent: () => number } {
  let sent = 0;
  const write = async (state: PartitionState, newIsr: number[]): Promise<number | null | "retry"> => {
    const controllerId = d.controllerId();
    const brokerEpoch = d.brokerEpoch();
    const where = { topic: state.topic, partition: state.partition, isr: newIsr, was: state.isr, controller: controllerId };
    if (controllerId < 0 || brokerEpoch < 0n) {
      d.logger.info(where, "ISR change waits: no controller or registration known yet");
      return "retry";
    }
    const byId = !bytesEqual(state.topicId, zeroUuid);
    const version = byId ? VERSION_BY_ID : VERSION_BY_NAME;
    const body = {
      brokerId: d.brokerId,
      brokerEpoch,
      topics: [{
        topicName: state.topic,
        topicId: state.topicId,
        partitions: [{ partitionIndex: state.partition, leaderEpoch: state.leaderEpoch, newIsr, leaderRecoveryState: 0, partitionEpoch: state.partitionEpoch }],
      }],
    };
    let res;
    try {
      sent++;
      res = await d.connections.request(controllerId, AlterPartitionApi, version, body);
    } catch (e) {
      d.logger.warn({ ...where, err: (e as Error).message }, "AlterPartition not answered; the leader tries again");
      return "retry";
    }
    const top = res.errorCode as number;
    const p = (res.topics as { partitions: { errorCode: number; partitionEpoch: number; isr: number[] }[] }[])[0]?.partitions[0];
    const code = top !== ErrorCode.NONE ? top : p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    if (code === ErrorCode.NONE && p !== undefined) {
      d.logger.info({ ...where, partitionEpoch: p.partitionEpoch }, "ISR changed through AlterPartition");
      return p.partitionEpoch;
    }
    d.logger.info({ ...where, errorCode: code, topLevel: top !== ErrorCode.NONE }, "AlterPartition refused");
    return top === ErrorCode.NONE && giveUp.has(code) ? null : "retry";
  };
  return Object.assign(write, { sent: () => sent, shutdown: () => d.connections.shutdown() });
}
