// strand groups list|describe|reset-offsets|delete: kafka-consumer-groups.sh's jobs over the
// Kafka protocol (ListGroups on every broker; DescribeGroups, OffsetFetch, OffsetCommit and
// DeleteGroups at the group's coordinator; ListOffsets at the partitions' leaders).
import process from "node:process";
import {
  ClientError,
  type ClusterClient,
  commitOffsets,
  deleteGroup,
  describeGroup,
  fetchCommittedOffsets,
  type GroupDescription,
  listGroups,
  listOffsets,
  OffsetSpec,
  type TopicPartition,
  tpKey,
} from "../client/mod.ts";
import { commonOptionsUsage, int, Output, parseToolArgs, required, runTool, UsageError, withCluster } from "./tool.ts";

export const groupsUsage = `Usage: strand groups COMMAND --bootstrap-server HOST:PORT[,...] [options]

Commands:
  list            [--state]
                  Group ids, one per line (with --state, a STATE column too).
  describe        --group ID
                  The group's state and members, then per partition: the committed offset,
                  the log end offset, the lag, and the member it is assigned to.
  reset-offsets   --group ID (--topic NAME[:P,P...] | --all-topics)
                  (--to-earliest | --to-latest | --to-offset N) [--execute]
                  Sets the committed offsets of an empty group (without --execute, only shows
                  them). --to-offset is kept within each partition's log start and end.
  delete          --group ID
                  Deletes an empty group and its committed offsets.

Options:
${commonOptionsUsage}`;

const options = {
  group: { type: "string" as const },
  state: { type: "boolean" as const },
  topic: { type: "string" as const, multiple: true },
  "all-topics": { type: "boolean" as const },
  "to-earliest": { type: "boolean" as const },
  "to-latest": { type: "boolean" as const },
  "to-offset": { type: "string" as const },
  execute: { type: "boolean" as const },
  "dry-run": { type: "boolean" as const },
};

/** Rows as columns padded to their widest cell, as kafka-consumer-groups.sh (and kafka-transactions.sh) print them. */
export function table(out: Output, rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) out.text(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] + 2))).join("").trimEnd() + "\n");
}

export async function groupsCommand(args: string[]): Promise<never> {
  return await runTool("groups", async () => {
    const { values, positionals } = parseToolArgs(args, options, groupsUsage, 1);
    const command = positionals[0];
    const out = new Output();
    switch (command) {
      case "list":
        await withCluster(values, async (c) => {
          const groups = await listGroups(c);
          if (values.state === true) table(out, [["GROUP", "STATE"], ...groups.map((g) => [g.groupId, g.state || "-"])]);
          else for (const g of groups) out.text(`${g.groupId}\n`);
        });
        break;
      case "describe": {
        const group = required(values, "group");
        await withCluster(values, (c) => describe(c, group, out));
        break;
      }
      case "reset-offsets": {
        const group = required(values, "group");
        const targets = ["to-earliest", "to-latest", "to-offset"].filter((k) => values[k] !== undefined && values[k] !== false);
        if (targets.length !== 1) throw new UsageError("reset-offsets takes one of --to-earliest, --to-latest, --to-offset N");
        const topics = (values.topic as string[] | undefined) ?? [];
        if ((topics.length > 0) === (values["all-topics"] === true)) throw new UsageError("reset-offsets takes --topic NAME or --all-topics");
        const toOffset = targets[0] === "to-offset" ? int(values, "to-offset", 0, 0) : null;
        await withCluster(values, (c) => resetOffsets(c, group, topics, targets[0], toOffset, values.execute === true, out));
        break;
      }
      case "delete": {
        const group = required(values, "group");
        await withCluster(values, async (c) => {
          await deleteGroup(c, group);
          out.text(`Deletion of requested consumer groups ('${group}') was successful.\n`);
        });
        break;
      }
      case undefined:
        throw new UsageError("a command is required: list, describe, reset-offsets or delete");
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
    await out.flush();
  });
}

async function describe(c: ClusterClient, group: string, out: Output): Promise<void> {
  const d = await describeGroup(c, group);
  const committed = await fetchCommittedOffsets(c, group, null);
  if (d.state === "Dead" && committed.length === 0) throw new ClientError(`group "${group}" does not exist`);
  const owner = new Map<string, GroupDescription["members"][number]>();
  const tps = new Map<string, TopicPartition>();
  for (const m of d.members) {
    for (const a of m.assignment) {
      for (const partition of a.partitions) {
        owner.set(tpKey(a.topic, partition), m);
        tps.set(tpKey(a.topic, partition), { topic: a.topic, partition });
      }
    }
  }
  const current = new Map<string, number>();
  for (const o of committed) {
    current.set(tpKey(o.topic, o.partition), o.offset);
    tps.set(tpKey(o.topic, o.partition), { topic: o.topic, partition: o.partition });
  }
  const sorted = [...tps.values()].sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  const ends = await listOffsets(c, sorted, OffsetSpec.latest).catch(() => new Map<string, number>());
  const protocol = d.protocol === "" ? "-" : d.protocol;
  out.text(`Group: ${group}  State: ${d.state}  Protocol: ${d.protocolType || "-"}/${protocol}  Members: ${d.members.length}\n`);
  if (d.members.length === 0) out.text(`Consumer group '${group}' has no active members.\n`);
  else {
    out.text("\n");
    table(out, [
      ["MEMBER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"],
      ...d.members.map((m) => [
        m.memberId,
        m.clientHost,
        m.clientId,
        String(m.assignment.reduce((n, a) => n + a.partitions.length, 0)),
        m.assignment.map((a) => `${a.topic}(${a.partitions.join(",")})`).join(" ") || "-",
      ]),
    ]);
  }
  out.text("\n");
  const rows = [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]];
  for (const tp of sorted) {
    const key = tpKey(tp.topic, tp.partition);
    const cur = current.get(key);
    const end = ends.get(key);
    const m = owner.get(key);
    rows.push([
      group,
      tp.topic,
      String(tp.partition),
      cur === undefined ? "-" : String(cur),
      end === undefined ? "-" : String(end),
      cur === undefined || end === undefined ? "-" : String(Math.max(0, end - cur)),
      m?.memberId ?? "-",
      m?.clientHost ?? "-",
      m?.clientId ?? "-",
    ]);
  }
  table(out, rows);
}

/** "t" (every partition) or "t:0,1,2", as kafka-consumer-groups.sh takes --topic. */
function parseTopicSpec(spec: string): { topic: string; partitions: number[] | null } {
  const i = spec.indexOf(":");
  if (i < 0) return { topic: spec, partitions: null };
  const partitions = spec.slice(i + 1).split(",").map((x) => Number(x.trim()));
  if (partitions.some((p) => !Number.isInteger(p) || p < 0)) throw new UsageError(`bad --topic "${spec}": expected NAME or NAME:P,P...`);
  return { topic: spec.slice(0, i), partitions };
}

async function resetOffsets(
  c: ClusterClient,
  group: string,
  topicSpecs: string[],
  target: string,
  toOffset: number | null,
  execute: boolean,
  out: Output,
): Promise<void> {
  const d = await describeGroup(c, group);
  if (d.state !== "Empty" && d.state !== "Dead") {
    throw new ClientError(`assignments can only be reset if the group '${group}' is inactive, but the current state is ${d.state}`);
  }
  let tps: TopicPartition[] = [];
  if (topicSpecs.length === 0) {
    tps = (await fetchCommittedOffsets(c, group, null)).map((o) => ({ topic: o.topic, partition: o.partition }));
  } else {
    for (const spec of topicSpecs.map(parseTopicSpec)) {
      const t = await c.topicMetadata(spec.topic);
      const all = t.partitions.map((p) => p.partition);
      for (const p of spec.partitions ?? all) {
        if (!all.includes(p)) throw new ClientError(`topic "${spec.topic}" has no partition ${p}`);
        tps.push({ topic: spec.topic, partition: p });
      }
    }
  }
  const earliest = await listOffsets(c, tps, OffsetSpec.earliest);
  const latest = await listOffsets(c, tps, OffsetSpec.latest);
  const plan = tps.map((tp) => {
    const key = tpKey(tp.topic, tp.partition);
    const lo = earliest.get(key) as number;
    const hi = latest.get(key) as number;
    const offset = target === "to-earliest" ? lo : target === "to-latest" ? hi : Math.min(Math.max(toOffset as number, lo), hi);
    return { ...tp, offset };
  });
  if (execute) await commitOffsets(c, group, plan);
  else process.stderr.write("Dry run: no offsets were changed (add --execute to commit them).\n");
  table(out, [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], ...plan.map((p) => [group, p.topic, String(p.partition), String(p.offset)])]);
}

