// InitProducerId (key 22), v0-4. v1 is v0 (a response sent before throttling), v2 is flexible,
// v3 adds the producer's current id and epoch (KIP-360: a producer asks for its epoch to be
// bumped instead of a new id), v4 is v3 (the client may handle PRODUCER_FENCED). Kafka 3.8's
// JSON lists v5 (KIP-890, transactions v2), which nothing here speaks yet.
import { api, message } from "../schema.ts";

export const InitProducerIdApi = api(
  message(22, "InitProducerIdRequest", "0-4", "2+", `
    transactionalId       string  nullable      // null: an idempotent producer without transactions
    transactionTimeoutMs  int32
    producerId            int64   v3+  default=-1
    producerEpoch         int16   v3+  default=-1
  `),
  message(22, "InitProducerIdResponse", "0-4", "2+", `
    throttleTimeMs        int32
    errorCode             int16
    producerId            int64   default=-1
    producerEpoch         int16
  `),
);
