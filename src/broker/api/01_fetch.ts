// Fetch (1), v4-12, for consumers. Full fetches only: strand creates no incremental fetch
// sessions (KIP-227), answering session id 0, which tells clients to keep sending full requests;
// a request naming a session id answers FETCH_SESSION_ID_NOT_FOUND. Reads stop at the high
// watermark; max_wait_ms is capped at limits.fetchMaxWaitMsMax. Fetches from replicas (replica_id
// >= 0) arrive with the replication issue and are refused until then.
import { FetchApi } from "../../protocol/mod.ts";
import { ErrorCode, fetchMaxWaitMsMax } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface FetchPartition {
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
}
interface FetchTopic {
  topic: string;
  partitions: FetchPartition[];
}

export const fetchHandler: ApiHandler<BrokerServices> = {
  api: FetchApi,
  async handle(s, _ctx, req) {
    const topics = req.topics as FetchTopic[];
    const base = { throttleTimeMs: 0, sessionId: 0 };
    if ((req.sessionId as number) !== 0) {
      return { ...base, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses: [] };
    }
    if ((req.replicaId as number) >= 0) {
      return { ...base, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, responses: [] };
    }
    const partitions = topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.topic,
        partition: p.partition,
        fetchOffset: Number(p.fetchOffset),
        maxBytes: Math.max(0, p.partitionMaxBytes),
      }))
    );
    const results = await s.replicaManager.fetchMessages({
      partitions,
      maxWaitMs: Math.min(Math.max(0, req.maxWaitMs as number), fetchMaxWaitMsMax),
      minBytes: req.minBytes as number,
      maxBytes: Math.min(Math.max(0, req.maxBytes as number), s.config.fetchMaxBytes),
      isReplica: false,
    });
    let i = 0;
    const responses = topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map(() => {
        const r = results[i++];
        return {
          partitionIndex: r.partition,
          errorCode: r.errorCode,
          highWatermark: BigInt(r.highWatermark),
          lastStableOffset: BigInt(r.lastStableOffset),
          logStartOffset: BigInt(r.logStartOffset),
          abortedTransactions: r.errorCode === ErrorCode.NONE ? [] : null,
          preferredReadReplica: -1,
          records: r.records ?? new Uint8Array(0),
        };
      }),
    }));
    return { ...base, errorCode: ErrorCode.NONE, responses };
  },
};
