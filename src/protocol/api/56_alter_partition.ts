// AlterPartition (key 56), v0-3 (all flexible): a partition leader asks the controller to change
// the ISR (KIP-497, the successor of ZooKeeper-mode leaders' own ISR writes; broker/api/
// 56_alter_partition.ts answers it, broker/alter_partition_sender.ts sends it). v1 adds the
// leader recovery state (KIP-704), v2 names topics by id, v3 gives each new ISR member's broker
// epoch (KIP-903).
import { api, message } from "../schema.ts";

export const AlterPartitionApi = api(
  message(56, "AlterPartitionRequest", "0-3", "0+", `
    brokerId                  int32
    brokerEpoch               int64   default=-1
    topics                    []
      topicName               string  v0-1
      topicId                 uuid    v2+
      partitions              []
        partitionIndex        int32
        leaderEpoch           int32
        newIsr                []int32 v0-2
        newIsrWithEpochs      []      v3+
          brokerId            int32
          brokerEpoch         int64   default=-1
        leaderRecoveryState   int8    v1+  default=0
        partitionEpoch        int32                       // the expected state version (zkVersion)
  `),
  message(56, "AlterPartitionResponse", "0-3", "0+", `
    throttleTimeMs            int32
    errorCode                 int16
    topics                    []
      topicName               string  v0-1
      topicId                 uuid    v2+
      partitions              []
        partitionIndex        int32
        errorCode             int16
        leaderId              int32
        leaderEpoch           int32
        isr                   []int32
        leaderRecoveryState   int8    v1+  default=0
        partitionEpoch        int32
  `),
);
