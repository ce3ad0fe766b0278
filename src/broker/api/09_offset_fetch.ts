// OffsetFetch (9), v0-9. v0 reads the registry (Kafka 0.8 consumers); v1-7 one group (topics null
// from v2: every committed partition); v8+ several groups per request (KIP-709). require_stable
// (v7+): a partition whose offset waits in an open transaction answers UNSTABLE_OFFSET_COMMIT.
// As Kafka: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED for the group), and DESCRIBE
// on each topic: named topics without it answer TOPIC_AUTHORIZATION_FAILED per partition, and
// "every committed partition" leaves them out.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { OffsetFetchApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler, RequestContext } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { fetchFromRegistry } from "./registry_offsets.ts";

type Wanted = { name: string; partitionIndexes: number[] }[] | null;

const deniedPartition = (partitionIndex: number, errorCode: number) => ({
  partitionIndex,
  committedOffset: -1n,
  committedLeaderEpoch: -1,
  metadata: "",
  errorCode,
});

function answerTopics(s: BrokerServices, ctx: RequestContext, groupId: string, topics: Wanted, requireStable: boolean) {
  const describable = (names: string[]) => authorizedNames(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, names);
  const asked = topics === null ? null : describable(topics.map((t) => t.name));
  const r = s.coordinator.offsets.fetch(
    groupId,
    topics?.filter((t) => asked!.has(t.name)).map((t) => ({ topic: t.name, partitions: t.partitionIndexes })) ?? null,
    requireStable,
  );
  const shown = topics === null ? describable(r.partitions.map((p) => p.topic)) : asked!;
  const byTopic = new Map<string, unknown[]>();
  for (const p of r.partitions) {
    if (!shown.has(p.topic)) continue;
    if (!byTopic.has(p.topic)) byTopic.set(p.topic, []);
    byTopic.get(p.topic)!.push({
      partitionIndex: p.partition,
      committedOffset: p.offset,
      committedLeaderEpoch: p.leaderEpoch,
      metadata: p.metadata,
      errorCode: p.errorCode,
    });
  }
  const out = [...byTopic].map(([name, partitions]) => ({ name, partitions }));
  for (const t of topics ?? []) {
    if (!asked!.has(t.name)) out.push({ name: t.name, partitions: t.partitionIndexes.map((p) => deniedPartition(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED)) });
  }
  return { errorCode: r.errorCode, topics: out };
}

export const offsetFetchHandler: ApiHandler<BrokerServices> = {
  api: OffsetFetchApi,
  async handle(s, ctx, req) {
    if (ctx.version >= 8) {
      const groups = req.groups as { groupId: string; topics: Wanted }[];
      return {
        throttleTimeMs: 0,
        groups: groups.map((g) =>
          allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId)
            ? { groupId: g.groupId, ...answerTopics(s, ctx, g.groupId, g.topics, req.requireStable as boolean) }
            : { groupId: g.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] }
        ),
      };
    }
    const groupId = req.groupId as string;
    const topics = req.topics as Wanted;
    if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) {
      // Before v2 there is no top-level error: v0 repeats it on each partition (Kafka's
      // getErrorResponse); v1 answers no topics at all, as Kafka 3.8's OffsetFetchResponse does.
      const code = ErrorCode.GROUP_AUTHORIZATION_FAILED;
      const topicsOut = ctx.version >= 1 ? [] : (topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => deniedPartition(p, code)) }));
      return { throttleTimeMs: 0, topics: topicsOut, errorCode: code };
    }
    if (ctx.version === 0) {
      const out = [];
      const describable = authorizedNames(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, (topics ?? []).map((t) => t.name));
      for (const t of topics ?? []) {
        const partitions = [];
        for (const p of t.partitionIndexes) {
          if (!describable.has(t.name)) {
            partitions.push(deniedPartition(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
            continue;
          }
          const offset = await fetchFromRegistry(s, groupId, t.name, p);
          partitions.push({ partitionIndex: p, committedOffset: offset, committedLeaderEpoch: -1, metadata: "", errorCode: ErrorCode.NONE });
        }
        out.push({ name: t.name, partitions });
      }
      return { throttleTimeMs: 0, topics: out, errorCode: ErrorCode.NONE };
    }
    const r = answerTopics(s, ctx, groupId, topics, ctx.version >= 7 && (req.requireStable as boolean));
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
