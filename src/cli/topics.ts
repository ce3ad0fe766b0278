// strand topics list|describe|create|alter|delete: kafka-topics.sh's jobs (and kafka-configs.sh's
// for topic configs), over the Kafka protocol, so they work against any broker of a strand
// cluster and against Kafka.
import {
  alterTopicConfigs,
  ClientError,
  type ClusterClient,
  ConfigSource,
  createPartitions,
  createTopic,
  deleteTopics,
  describeTopicConfigs,
  type TopicInfo,
} from "../client/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { commonOptionsUsage, int, keyValues, list, Output, parseToolArgs, required, runTool, str, UsageError, withCluster } from "./tool.ts";

export const topicsUsage = `Usage: strand topics COMMAND --bootstrap-server HOST:PORT[,HOST:PORT...] [options]

Commands:
  list       [--exclude-internal]
             Topic names, one per line.
  describe   [--topic NAME] [--exclude-internal]
             Partitions with leader, replicas and ISR, and the topic's config overrides
             (every topic without --topic), as kafka-topics.sh --describe prints them.
  create     --topic NAME [--partitions N] [--replication-factor N] [--config KEY=VALUE]...
             [--if-not-exists]
             Without --partitions/--replication-factor the broker's num.partitions and
             default.replication.factor apply.
  alter      --topic NAME [--partitions N] [--config KEY=VALUE]... [--delete-config KEY]...
             Raises the partition count (CreatePartitions) and/or sets and removes config
             overrides (IncrementalAlterConfigs).
  delete     --topic NAME [--if-exists]

Options:
${commonOptionsUsage}`;

const options = {
  topic: { type: "string" as const },
  partitions: { type: "string" as const },
  "replication-factor": { type: "string" as const },
  config: { type: "string" as const, multiple: true },
  "delete-config": { type: "string" as const, multiple: true },
  "if-not-exists": { type: "boolean" as const },
  "if-exists": { type: "boolean" as const },
  "exclude-internal": { type: "boolean" as const },
};

export async function topicsCommand(args: string[]): Promise<never> {
  return await runTool("topics", async () => {
    const { values, positionals } = parseToolArgs(args, options, topicsUsage, 1);
    const command = positionals[0];
    const out = new Output();
    switch (command) {
      case "list":
        await withCluster(values, async (c) => {
          const md = await c.retrying(() => c.refreshMetadata(null));
          for (const t of sortedTopics(md.topics, values["exclude-internal"] === true)) out.text(`${t.name}\n`);
        });
        break;
      case "describe":
        await withCluster(values, (c) => describe(c, str(values, "topic"), values["exclude-internal"] === true, out));
        break;
      case "create": {
        const name = required(values, "topic");
        const partitions = int(values, "partitions", -1, 1, 1_000_000);
        const replicationFactor = int(values, "replication-factor", -1, 1, 32_767);
        const configs = keyValues(values, "config");
        await withCluster(values, async (c) => {
          try {
            await createTopic(c, { name, partitions, replicationFactor, configs });
            out.text(`Created topic ${name}.\n`);
          } catch (e) {
            if (!(values["if-not-exists"] && e instanceof ClientError && e.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS)) throw e;
          }
        });
        break;
      }
      case "alter": {
        const name = required(values, "topic");
        const partitions = str(values, "partitions") === undefined ? null : int(values, "partitions", 0, 1, 1_000_000);
        const set = keyValues(values, "config");
        const remove = list(values, "delete-config");
        if (partitions === null && Object.keys(set).length === 0 && remove.length === 0) {
          throw new UsageError("alter needs --partitions, --config or --delete-config");
        }
        await withCluster(values, async (c) => {
          if (partitions !== null) {
            await createPartitions(c, name, partitions);
            out.text(`Topic ${name} now has ${partitions} partitions.\n`);
          }
          if (Object.keys(set).length > 0 || remove.length > 0) {
            await alterTopicConfigs(c, name, set, remove);
            out.text(`Updated the config of topic ${name}.\n`);
          }
        });
        break;
      }
      case "delete": {
        const name = required(values, "topic");
        await withCluster(values, async (c) => {
          try {
            await deleteTopics(c, [name]);
            out.text(`Deleted topic ${name}.\n`);
          } catch (e) {
            if (!(values["if-exists"] && e instanceof ClientError && e.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) throw e;
          }
        });
        break;
      }
      case undefined:
        throw new UsageError("a command is required: list, describe, create, alter or delete");
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
    await out.flush();
  });
}

function sortedTopics(topics: Map<string, TopicInfo>, excludeInternal: boolean): TopicInfo[] {
  return [...topics.values()]
    .filter((t) => t.errorCode === ErrorCode.NONE && !(excludeInternal && t.isInternal))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function describe(c: ClusterClient, topic: string | undefined, excludeInternal: boolean, out: Output): Promise<void> {
  let topics: TopicInfo[];
  if (topic !== undefined) {
    topics = [await c.topicMetadata(topic)];
  } else {
    const md = await c.retrying(() => c.refreshMetadata(null));
    topics = sortedTopics(md.topics, excludeInternal);
  }
  const configs = topics.length === 0 ? new Map() : await describeTopicConfigs(c, topics.map((t) => t.name));
  const nodes = (ids: number[]) => (ids.length === 0 ? "" : ids.join(","));
  for (const t of topics) {
    const overrides = (configs.get(t.name) ?? [])
      .filter((e: { source: number }) => e.source === ConfigSource.dynamicTopic)
      .map((e: { name: string; value: string | null; isSensitive: boolean }) => `${e.name}=${e.isSensitive ? "(sensitive)" : e.value ?? ""}`)
      .sort();
    const rf = t.partitions[0]?.replicas.length ?? 0;
    out.text(`Topic: ${t.name}\tTopicId: ${t.topicId}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${rf}\tConfigs: ${overrides.join(",")}\n`);
    for (const p of t.partitions) {
      const offline = p.offline.length > 0 ? `\tOffline: ${nodes(p.offline)}` : "";
      out.text(`\tTopic: ${t.name}\tPartition: ${p.partition}\tLeader: ${p.leader < 0 ? "none" : p.leader}\tReplicas: ${nodes(p.replicas)}\tIsr: ${nodes(p.isr)}${offline}\n`);
    }
  }
}
