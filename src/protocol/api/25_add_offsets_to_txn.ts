// AddOffsetsToTxn (key 25), v0-4. v1-2 change only throttling and retries, v3 is flexible, v4
// adds TRANSACTION_ABORTABLE to the errors answered.
import { api, message } from "../schema.ts";

export const AddOffsetsToTxnApi = api(
  message(25, "AddOffsetsToTxnRequest", "0-4", "3+", `
    transactionalId       string
    producerId            int64
    producerEpoch         int16
    groupId               string
  `),
  message(25, "AddOffsetsToTxnResponse", "0-4", "3+", `
    throttleTimeMs        int32
    errorCode             int16
  `),
);
