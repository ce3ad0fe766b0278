// A broker about to stop asks the controller to move its leaderships away first
// (ControlledShutdown v3, what Kafka 3.x's brokers send). One request on its own connection; the
// caller retries (controlled.shutdown.max.retries) while partitions remain or the call fails.
import { KafkaConnection, type SaslCredentials } from "../client/mod.ts";
import type { Platform, TlsClientOptions } from "../platform/mod.ts";
import { ControlledShutdownApi } from "../protocol/mod.ts";

export const CONTROLLED_SHUTDOWN_VERSION = 3;

export interface ControlledShutdownResult {
  errorCode: number;
  /** Partitions this broker still leads (the controller could not move them yet). */
  remaining: { topic: string; partition: number }[];
}

/**
 * Sends ControlledShutdown for `brokerId` (registered as `brokerEpoch`) to the controller at
 * `endpoint`. Rejects (KafkaConnectionError) when the controller cannot be reached or does not
 * answer within timeoutMs; an answer with an error code resolves with it.
 */
export async function requestControlledShutdown(
  platform: Platform,
  endpoint: { host: string; port: number },
  brokerId: number,
  brokerEpoch: bigint,
  timeoutMs: number,
  sasl?: SaslCredentials,
  tls?: TlsClientOptions,
): Promise<ControlledShutdownResult> {
  const conn = await KafkaConnection.connect(platform, {
    host: endpoint.host,
    port: endpoint.port,
    clientId: `strand-broker-${brokerId}`,
    connectTimeoutMs: timeoutMs,
    sasl,
    tls,
  });
  try {
    const res = await conn.request(ControlledShutdownApi, CONTROLLED_SHUTDOWN_VERSION, { brokerId, brokerEpoch }, timeoutMs);
    const remaining = (res.remainingPartitions as { topicName: string; partitionIndex: number }[])
      .map((p) => ({ topic: p.topicName, partition: p.partitionIndex }));
    return { errorCode: res.errorCode as number, remaining };
  } finally {
    conn.close();
  }
}
