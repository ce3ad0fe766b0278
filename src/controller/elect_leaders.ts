// ElectLeaders (v2) sent to the controller, for a broker that is not the controller itself (the
// admin API's elect-leader route, `strand` tools). One request on its own connection.
import { KafkaConnection, type SaslCredentials } from "../client/mod.ts";
import type { Platform, TlsClientOptions } from "../platform/mod.ts";
import { ElectLeadersApi } from "../protocol/mod.ts";

export const ELECT_LEADERS_VERSION = 2;

export interface ElectLeaderResult {
  topic: string;
  partition: number;
  errorCode: number;
  errorMessage: string | null;
}

/** electionType 0: preferred, 1: unclean. Rejects when the controller cannot be reached. */
export async function requestElectLeaders(
  platform: Platform,
  endpoint: { host: string; port: number },
  electionType: 0 | 1,
  partitions: { topic: string; partition: number }[],
  timeoutMs: number,
  sasl?: SaslCredentials,
  tls?: TlsClientOptions,
): Promise<{ errorCode: number; results: ElectLeaderResult[] }> {
  const conn = await KafkaConnection.connect(platform, { host: endpoint.host, port: endpoint.port, connectTimeoutMs: timeoutMs, sasl, tls });
  try {
    const byTopic = new Map<string, number[]>();
    for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
    const res = await conn.request(ElectLeadersApi, ELECT_LEADERS_VERSION, {
      electionType,
      topicPartitions: [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps })),
      timeoutMs,
    }, timeoutMs);
    const results = (res.replicaElectionResults as { topic: string; partitionResult: { partitionId: number; errorCode: number; errorMessage: string | null }[] }[])
      .flatMap((t) => t.partitionResult.map((r) => ({ topic: t.topic, partition: r.partitionId, errorCode: r.errorCode, errorMessage: r.errorMessage })));
    return { errorCode: res.errorCode as number, results };
  } finally {
    conn.close();
  }
}
