// OffsetFetch (9), v0-9. v0 reads the registry (Kafka 0.8 consumers); v1-7 one group (topics null
// from v2: every committed partition); v8+ several groups per request (KIP-709). require_stable
// has nothing to wait for while strand has no transactions.
import { OffsetFetchApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { fetchFromRegistry } from "./registry_offsets.ts";

type Wanted = { name: string; partitionIndexes: number[] }[] | null;

function answerTopics(s: BrokerServices, groupId: string, topics: Wanted) {
  const r = s.coordinator.offsets.fetch(groupId, topics?.map((t) => ({ topic: t.name, partitions: t.partitionIndexes })) ?? null);
  const byTopic = new Map<string, unknown[]>();
  for (const p of r.partitions) {
    if (!byTopic.has(p.topic)) byTopic.set(p.topic, []);
    byTopic.get(p.topic)!.push({
      partitionIndex: p.partition,
      committedOffset: p.offset,
      committedLeaderEpoch: p.leaderEpoch,
      metadata: p.metadata,
      errorCode: p.errorCode,
    });
  }
  return { errorCode: r.errorCode, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
}

export const offsetFetchHandler: ApiHandler<BrokerServices> = {
  api: OffsetFetchApi,
  async handle(s, ctx, req) {
    if (ctx.version >= 8) {
      const groups = req.groups as { groupId: string; topics: Wanted }[];
      return {
        throttleTimeMs: 0,
        groups: groups.map((g) => ({ groupId: g.groupId, ...answerTopics(s, g.groupId, g.topics) })),
      };
    }
    const groupId = req.groupId as string;
    const topics = req.topics as Wanted;
    if (ctx.version === 0) {
      const out = [];
      for (const t of topics ?? []) {
        const partitions = [];
        for (const p of t.partitionIndexes) {
          const offset = await fetchFromRegistry(s, groupId, t.name, p);
          partitions.push({ partitionIndex: p, committedOffset: offset, committedLeaderEpoch: -1, metadata: "", errorCode: ErrorCode.NONE });
        }
        out.push({ name: t.name, partitions });
      }
      return { throttleTimeMs: 0, topics: out, errorCode: ErrorCode.NONE };
    }
    const r = answerTopics(s, groupId, topics);
    // Before v2 there is no top-level error: it is repeated on each partition.
    if (ctx.version < 2 && r.errorCode !== ErrorCode.NONE) {
      const topicsOut = (topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1n, committedLeaderEpoch: -1, metadata: "", errorCode: r.errorCode })),
      }));
      return { throttleTimeMs: 0, topics: topicsOut, errorCode: r.errorCode };
    }
    return { throttleTimeMs: 0, topics: r.topics, errorCode: r.errorCode };
  },
  errorResponse(req, version, errorCode) {
    type Named = { name: string; partitionIndexes: number[] }[] | null;
    const failed = (topics: Named) =>
      (topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, metadata: null, errorCode })),
      }));
    if (version >= 8) {
      const groups = req.groups as { groupId: string; topics: Named }[];
      return { throttleTimeMs: 0, groups: groups.map((g) => ({ groupId: g.groupId, topics: failed(g.topics), errorCode })) };
    }
    return { throttleTimeMs: 0, topics: failed(req.topics as Named), errorCode };
  },
};
