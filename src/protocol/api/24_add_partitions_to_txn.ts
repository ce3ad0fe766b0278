// AddPartitionsToTxn (key 24), v0-5. v0-3: one transaction from a producer (v3 flexible);
// v4+: batched transactions from a partition leader verifying them (KIP-890), with verifyOnly;
// v5 adds TRANSACTION_ABORTABLE to the errors answered.
import { api, message } from "../schema.ts";

export const AddPartitionsToTxnApi = api(
  message(24, "AddPartitionsToTxnRequest", "0-5", "3+", `
    transactions                []      v4+
      transactionalId           string
      producerId                int64
      producerEpoch             int16
      verifyOnly                bool    default=false
      topics                    []
        name                    string
        partitions              []int32
    v3AndBelowTransactionalId   string  v0-3
    v3AndBelowProducerId        int64   v0-3
    v3AndBelowProducerEpoch     int16   v0-3
    v3AndBelowTopics            []      v0-3
      name                      string
      partitions                []int32
  `),
  message(24, "AddPartitionsToTxnResponse", "0-5", "3+", `
    throttleTimeMs              int32
    errorCode                   int16   v4+
    resultsByTransaction        []      v4+
      transactionalId           string
      topicResults              []
        name                    string
        resultsByPartition      []
          partitionIndex        int32
          partitionErrorCode    int16
    resultsByTopicV3AndBelow    []      v0-3
      name                      string
      resultsByPartition        []
        partitionIndex          int32
        partitionErrorCode      int16
  `),
);
