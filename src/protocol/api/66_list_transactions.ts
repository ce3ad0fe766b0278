// ListTransactions (key 66), v0-1 (flexible): the transactional ids a coordinator holds, filtered
// by state and producer id; v1 adds the duration filter (KIP-994: running longer than that).
import { api, message } from "../schema.ts";

export const ListTransactionsApi = api(
  message(66, "ListTransactionsRequest", "0-1", "0+", `
    stateFilters              []string
    producerIdFilters         []int64
    durationFilter            int64   v1+  default=-1
  `),
  message(66, "ListTransactionsResponse", "0-1", "0+", `
    throttleTimeMs            int32
    errorCode                 int16
    unknownStateFilters       []string
    transactionStates         []
      transactionalId         string
      producerId              int64
      transactionState        string
  `),
);
