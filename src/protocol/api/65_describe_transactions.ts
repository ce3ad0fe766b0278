// DescribeTransactions (key 65), v0 (flexible): the coordinator's view of transactional ids
// (kafka-transactions.sh describe).
import { api, message } from "../schema.ts";

export const DescribeTransactionsApi = api(
  message(65, "DescribeTransactionsRequest", "0", "0+", `
    transactionalIds          []string
  `),
  message(65, "DescribeTransactionsResponse", "0", "0+", `
    throttleTimeMs            int32
    transactionStates         []
      errorCode               int16
      transactionalId         string
      transactionState        string
      transactionTimeoutMs    int32
      transactionStartTimeMs  int64
      producerId              int64
      producerEpoch           int16
      topics                  []
        topic                 string
        partitions            []int32
  `),
);
