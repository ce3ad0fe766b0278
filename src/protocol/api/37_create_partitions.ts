// CreatePartitions (key 37), v0-3: raises a topic's partition count, optionally with the replica
// assignment of each new partition. v1 is v0 (a response sent before throttling), v2 is
// flexible, v3 is v2 (CreatePartitions may be throttled, KIP-599).
import { api, message } from "../schema.ts";

export const CreatePartitionsApi = api(
  message(37, "CreatePartitionsRequest", "0-3", "2+", `
    topics                    []
      name                    string
      count                   int32                       // the new partition count
      assignments             []      nullable            // one per new partition, or null
        brokerIds             []int32
    timeoutMs                 int32
    validateOnly              bool
  `),
  message(37, "CreatePartitionsResponse", "0-3", "2+", `
    throttleTimeMs            int32
    results                   []
      name                    string
      errorCode               int16
      errorMessage            string  nullable  default=null
  `),
);
