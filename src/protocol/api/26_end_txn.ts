// EndTxn (key 26), v0-4. v1-2 change only throttling and retries (v2: PRODUCER_FENCED), v3 is
// flexible, v4 adds TRANSACTION_ABORTABLE to the errors answered.
import { api, message } from "../schema.ts";

export const EndTxnApi = api(
  message(26, "EndTxnRequest", "0-4", "3+", `
    transactionalId       string
    producerId            int64
    producerEpoch         int16
    committed             bool     // true: commit; false: abort
  `),
  message(26, "EndTxnResponse", "0-4", "3+", `
    throttleTimeMs        int32
    errorCode             int16
  `),
);
