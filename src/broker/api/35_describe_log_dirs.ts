// DescribeLogDirs (35), v0-4, as kafka-log-dirs.sh and AdminClient.describeLogDirs ask: every
// configured log dir, in log.dirs order, with errorCode NONE or KAFKA_STORAGE_ERROR (offline:
// no partitions, no sizes), and, per partition log in it that the request names (topics null:
// all), its size in bytes and offsetLag. offsetLag is Kafka's max(highWatermark - logEndOffset, 0)
// for a current (non-future) log: 0 for a leader; strand has no future logs (AlterReplicaLogDirs),
// so isFutureKey is false. v4 adds the volume's total and usable bytes (statfs), -1 when unknown.
// Topics with no requested partition in a dir are left out. Needs DESCRIBE on the cluster: else no
// dirs, and (v3+) CLUSTER_AUTHORIZATION_FAILED, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DescribeLogDirsApi, type Struct } from "../../protocol/mod.ts";
import type { Log } from "../../log/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface RequestedTopic {
  topic: string;
  partitions: number[];
}

function partitionsByTopic(topics: RequestedTopic[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const t of topics) {
    const set = out.get(t.topic) ?? new Set<number>();
    for (const p of t.partitions) set.add(p);
    out.set(t.topic, set);
  }
  return out;
}

function topicsOf(logs: Log[], wanted: Map<string, Set<number>> | null): Struct[] {
  const byTopic = new Map<string, Struct[]>();
  for (const log of logs) {
    if (wanted !== null && !wanted.get(log.topic)?.has(log.partition)) continue;
    let partitions = byTopic.get(log.topic);
    if (partitions === undefined) byTopic.set(log.topic, partitions = []);
    partitions.push({
      partitionIndex: log.partition,
      partitionSize: BigInt(log.sizeBytes),
      offsetLag: BigInt(Math.max(log.highWatermark - log.logEndOffset, 0)),
      isFutureKey: false,
    });
  }
  return [...byTopic].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, partitions]) => ({
    name,
    partitions: partitions.sort((a, b) => (a.partitionIndex as number) - (b.partitionIndex as number)),
  }));
}

export const describeLogDirsHandler: ApiHandler<BrokerServices> = {
  api: DescribeLogDirsApi,
  handle(s, ctx, req) {
    if (!clusterAllowed(s, ctx, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    const requested = req.topics as RequestedTopic[] | null;
    const wanted = requested === null ? null : partitionsByTopic(requested);
    const results = s.logManager.describeDirs().map((d) => {
      if (d.offlineReason !== null) {
        return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, logDir: d.dir, topics: [], totalBytes: -1n, usableBytes: -1n };
      }
      return {
        errorCode: ErrorCode.NONE,
        logDir: d.dir,
        topics: topicsOf(d.logs, wanted),
        totalBytes: BigInt(d.space?.totalBytes ?? -1),
        usableBytes: BigInt(d.space?.usableBytes ?? -1),
      };
    });
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
  },
};
