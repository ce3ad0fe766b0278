// ControlledShutdown (key 7), v0-3: a broker about to stop asks the controller to move the
// leadership of its partitions elsewhere; the answer lists the partitions it still leads (the
// broker retries until none remain). v1 is v0 with the standard request header (v0's header has
// no client id), v2 carries the broker epoch (KIP-380), v3 is flexible.
import { api, message } from "../schema.ts";

export const ControlledShutdownApi = api(
  message(7, "ControlledShutdownRequest", "0-3", "3+", `
    brokerId                  int32
    brokerEpoch               int64   v2+  default=-1
  `),
  message(7, "ControlledShutdownResponse", "0-3", "3+", `
    errorCode                 int16
    remainingPartitions       []
      topicName               string
      partitionIndex          int32
  `),
);
