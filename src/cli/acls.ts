// strand acls --add|--remove|--list: ACLs over the Kafka protocol, with kafka-acls.sh's flags,
// checks and output (Kafka 3.8's AclCommand with --bootstrap-server):
// - --add makes, for each resource, an ALLOW entry per --allow-principal x --allow-host x
//   --operation and a DENY entry per --deny-principal x --deny-host x --operation (hosts default
//   to * once a principal is given, the operation to All, the pattern type to LITERAL), prints
//   "Adding ACLs for resource `ResourcePattern(...)`:" with them, then the resources' current ACLs.
// - --remove deletes exactly those entries, or every ACL of the resource filter when no principal
//   is given, each after a (y/n) question on stdin unless --force; then lists what is left.
// - --list shows the ACLs of the resources (every ACL without one), under "ACLs for principal
//   `P`" per --principal when given.
// - --producer and --consumer add the operations a producer or consumer needs; --idempotent adds
//   IdempotentWrite on the cluster.
// An entry prints as Kafka's AccessControlEntry.toString, a resource as ResourcePattern.toString.
// Differences: a bad command line exits 2 with one line (kafka-acls.sh prints its usage and exits
// 1); a failure is one line and exit 1 (kafka-acls.sh adds a stack trace).
import {
  type AclEntryView,
  type AclFilterView,
  aclCodes,
  aclNames,
  createAcls,
  deleteAcls,
  describeAcl,
  describeAcls,
} from "../client/mod.ts";
import type { ClusterClient } from "../client/mod.ts";
import { commonOptionsUsage, list, Output, parseToolArgs, runTool, stdinLines, str, UsageError, type Values, withCluster } from "./tool.ts";

export const aclsUsage = `Usage: strand acls --bootstrap-server HOST:PORT[,HOST:PORT...] (--add | --remove | --list) [options]

Actions:
  --add                      Adds the ACLs the options below describe, then lists the resources' ACLs.
  --remove                   Removes them (every ACL of the resources when no principal is given),
                             asking first (y/n on stdin) unless --force; then lists what is left.
  --list                     Lists the ACLs of the resources (every ACL without a resource).

Resources (repeatable; '*' is every resource of the type):
  --topic NAME               --group NAME               --transactional-id NAME
  --delegation-token ID      --user-principal P         (CreateTokens, DescribeTokens on a user)
  --cluster                  the cluster resource (kafka-cluster)
  --resource-pattern-type T  LITERAL (default), PREFIXED; for --list/--remove also ANY, MATCH

Entries:
  --allow-principal P        e.g. User:alice (repeatable; User:* is everyone)
  --deny-principal P         (repeatable)
  --allow-host H             hosts the allow entries apply to (repeatable; default *)
  --deny-host H              hosts the deny entries apply to (repeatable; default *)
  --operation OP             Read, Write, Create, Delete, Alter, Describe, ClusterAction,
                             DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens,
                             DescribeTokens, All (repeatable; default All)
  --producer                 the producer's operations: Write, Describe, Create on the topics,
                             Write, Describe on the transactional ids
  --idempotent               with --producer: IdempotentWrite on the cluster
  --consumer                 the consumer's operations: Read, Describe on the topics, Read on the groups
  --principal P              with --list: only this principal's ACLs (repeatable)
  --force                    --remove without asking

Options:
${commonOptionsUsage}`;

const options = {
  add: { type: "boolean" as const },
  remove: { type: "boolean" as const },
  list: { type: "boolean" as const },
  topic: { type: "string" as const, multiple: true },
  group: { type: "string" as const, multiple: true },
  "transactional-id": { type: "string" as const, multiple: true },
  "delegation-token": { type: "string" as const, multiple: true },
  "user-principal": { type: "string" as const, multiple: true },
  cluster: { type: "boolean" as const },
  "resource-pattern-type": { type: "string" as const },
  "allow-principal": { type: "string" as const, multiple: true },
  "deny-principal": { type: "string" as const, multiple: true },
  "allow-host": { type: "string" as const, multiple: true },
  "deny-host": { type: "string" as const, multiple: true },
  operation: { type: "string" as const, multiple: true },
  producer: { type: "boolean" as const },
  consumer: { type: "boolean" as const },
  idempotent: { type: "boolean" as const },
  principal: { type: "string" as const, multiple: true },
  force: { type: "boolean" as const },
};

interface Resource {
  resourceType: string;
  resourceName: string;
  patternType: string;
}

/** An entry without its resource: (principal, host, operation, permission). */
type Entry = Pick<AclEntryView, "principal" | "host" | "operation" | "permissionType">;

const cluster = (patternType: string): Resource => ({ resourceType: "Cluster", resourceName: "kafka-cluster", patternType });

/** Kafka's AclEntry.supportedOperations, by resource type (All is always accepted). */
const supportedOperations: Record<string, string[]> = {
  Topic: ["Read", "Write", "Create", "Describe", "Delete", "Alter", "DescribeConfigs", "AlterConfigs"],
  Group: ["Read", "Describe", "Delete"],
  Cluster: ["Create", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "Alter", "Describe"],
  TransactionalId: ["Describe", "Write"],
  DelegationToken: ["Describe"],
  User: ["CreateTokens", "DescribeTokens"],
};

/** "DescribeConfigs" → "DESCRIBE_CONFIGS", as Kafka's enums print. */
const upper = (name: string) => name.replace(/(?!^)([A-Z])/g, "_$1").toUpperCase();

/** Kafka's ResourcePattern.toString (a filter's null name prints as <any>). */
function patternText(r: { resourceType: string; resourceName: string | null; patternType: string }): string {
  return `ResourcePattern(resourceType=${upper(r.resourceType)}, name=${r.resourceName ?? "<any>"}, patternType=${r.patternType})`;
}

/** Kafka's AccessControlEntry.toString. */
const entryText = (e: Entry) => describeAcl({ ...e, resourceType: "Topic", resourceName: "", patternType: "LITERAL" }).replace(/ on ResourcePattern.*$/, "");

/** Kafka's checkArgs: the option combinations kafka-acls.sh refuses, with its messages. */
function checkArgs(values: Values): "add" | "remove" | "list" {
  const has = (o: string) => values[o] !== undefined && values[o] !== false;
  const actions = (["add", "remove", "list"] as const).filter(has);
  if (actions.length !== 1) throw new UsageError("Command must include exactly one action: --list, --add, --remove.");
  const invalidWith = (used: string, others: string[]) => {
    for (const o of others) if (has(used) && has(o)) throw new UsageError(`Option "[${used}]" can't be used with option "[${o}]"`);
  };
  invalidWith("list", ["producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"]);
  invalidWith("producer", ["operation", "deny-principal", "deny-host"]);
  invalidWith("consumer", ["operation", "deny-principal", "deny-host"]);
  if (has("principal") && !has("list")) throw new UsageError("The --principal option is only available if --list is set");
  if (has("producer") && !has("topic")) throw new UsageError("With --producer you must specify a --topic");
  if (has("idempotent") && !has("producer")) throw new UsageError("The --idempotent option is only available if --producer is set");
  if (has("consumer") && (!has("topic") || !has("group") || (!has("producer") && (has("cluster") || has("transactional-id"))))) {
    throw new UsageError("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.");
  }
  return actions[0];
}

function patternTypeOf(values: Values): string {
  const text = (str(values, "resource-pattern-type") ?? "LITERAL").toUpperCase();
  if (!["LITERAL", "PREFIXED", "ANY", "MATCH"].includes(text)) throw new UsageError(`--resource-pattern-type ${text}: use LITERAL, PREFIXED, ANY or MATCH`);
  return text;
}

/** Kafka's getResourceFilter: the resources named (the cluster only with a LITERAL pattern type). */
function resourcesOf(values: Values, patternType: string, dieIfNone: boolean): Resource[] {
  const out: Resource[] = [];
  const named = (option: string, resourceType: string) => {
    for (const name of list(values, option)) out.push({ resourceType, resourceName: name.trim(), patternType });
  };
  named("topic", "Topic");
  if (patternType === "LITERAL" && (values.cluster === true || values.idempotent === true)) out.push(cluster(patternType));
  named("group", "Group");
  named("transactional-id", "TransactionalId");
  named("delegation-token", "DelegationToken");
  named("user-principal", "User");
  if (out.length === 0 && dieIfNone) {
    throw new UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>");
  }
  return out;
}

function principalsOf(values: Values, name: string): string[] {
  const ps = list(values, name).map((p) => p.trim());
  for (const p of ps) if (p.indexOf(":") <= 0) throw new UsageError(`--${name} ${p}: a principal is Type:name, e.g. User:alice`);
  return [...new Set(ps)];
}

/** Kafka's getAcl: allow and deny entries for the operations (hosts default to * once a principal is given). */
function entriesOf(values: Values, operations: string[]): Entry[] {
  const out: Entry[] = [];
  for (const [principalOpt, hostOpt, permissionType] of [["allow-principal", "allow-host", "Allow"], ["deny-principal", "deny-host", "Deny"]] as const) {
    const principals = principalsOf(values, principalOpt);
    const given = [...new Set(list(values, hostOpt).map((h) => h.trim()))];
    const hosts = given.length > 0 ? given : principals.length > 0 ? ["*"] : [];
    for (const principal of principals) for (const operation of operations) for (const host of hosts) out.push({ principal, host, operation, permissionType });
  }
  return out;
}

/** The --operation names, in Kafka's spelling ("describe-configs" → "DescribeConfigs"); All by default. */
function operationsOf(values: Values): string[] {
  const ops = list(values, "operation").map((op) => {
    try {
      return aclNames.operation(aclCodes.operation(op.trim()));
    } catch (e) {
      throw new UsageError(`--operation ${op}: ${(e as Error).message}`);
    }
  });
  return ops.length === 0 ? ["All"] : [...new Set(ops)];
}

const resourceKey = (r: Resource) => `${r.resourceType}\u0000${r.resourceName}\u0000${r.patternType}`;

/** Kafka's getResourceFilterToAcls: the entries per resource, from the options or --producer/--consumer. */
function resourceToEntries(values: Values, patternType: string): Map<string, { resource: Resource; entries: Entry[] }> {
  const out = new Map<string, { resource: Resource; entries: Entry[] }>();
  const put = (r: Resource, entries: Entry[], merge: boolean) => {
    const had = out.get(resourceKey(r));
    out.set(resourceKey(r), { resource: r, entries: merge && had !== undefined ? [...had.entries, ...entries] : entries });
  };
  const resources = resourcesOf(values, patternType, true);
  if (values.producer !== true && values.consumer !== true) {
    const entries = entriesOf(values, operationsOf(values));
    for (const r of resources) put(r, entries, false);
  }
  if (values.producer === true) {
    for (const r of resources.filter((x) => x.resourceType === "Topic")) put(r, entriesOf(values, ["Write", "Describe", "Create"]), false);
    for (const r of resources.filter((x) => x.resourceType === "TransactionalId")) put(r, entriesOf(values, ["Write", "Describe"]), false);
    if (values.idempotent === true) put(cluster("LITERAL"), entriesOf(values, ["IdempotentWrite"]), false);
  }
  if (values.consumer === true) {
    for (const r of resources.filter((x) => x.resourceType === "Topic")) put(r, entriesOf(values, ["Read", "Describe"]), true);
    for (const r of resources.filter((x) => x.resourceType === "Group")) put(r, entriesOf(values, ["Read"]), true);
  }
  for (const { resource, entries } of out.values()) {
    const valid = [...supportedOperations[resource.resourceType], "All"];
    if (entries.some((e) => !valid.includes(e.operation))) {
      throw new UsageError(`ResourceType ${upper(resource.resourceType)} only supports operations ${valid.map(upper).join(", ")}`);
    }
  }
  return out;
}

/** Kafka's printResourceAcls: one block per resource, entries tab-indented. */
function printBlock(out: Output, title: string, resource: string, entries: Entry[]): void {
  out.text(`${title} \`${resource}\`: \n ${entries.map((e) => `\t${entryText(e)}`).join("\n")} \n\n`);
}

/** Kafka's listAcls: the ACLs of the resources named (all without one), per --principal when given. */
async function listAcls(c: ClusterClient, values: Values, out: Output): Promise<void> {
  const patternType = patternTypeOf(values);
  const filters: AclFilterView[] = resourcesOf(values, patternType, false).map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, patternType }));
  const found: AclEntryView[] = [];
  for (const f of filters.length === 0 ? [{}] : filters) found.push(...await describeAcls(c, f));
  const byResource = new Map<string, Entry[]>();
  for (const a of found) {
    const key = patternText(a);
    const entries = byResource.get(key) ?? [];
    if (!entries.some((e) => entryText(e) === entryText(a))) entries.push(a);
    byResource.set(key, entries);
  }
  const principals = principalsOf(values, "principal");
  if (principals.length === 0) {
    for (const [resource, entries] of byResource) printBlock(out, "Current ACLs for resource", resource, entries);
    return;
  }
  for (const principal of principals) {
    out.text(`ACLs for principal \`${principal}\`\n`);
    for (const [resource, entries] of byResource) {
      const own = entries.filter((e) => e.principal === principal);
      if (own.length > 0) printBlock(out, "Current ACLs for resource", resource, own);
    }
  }
}

/** Kafka's confirmAction: true with --force, else when the next stdin line is y or Y. */
async function confirm(values: Values, out: Output, answers: AsyncGenerator<Uint8Array>, question: string): Promise<boolean> {
  if (values.force === true) return true;
  out.text(`${question}\n`);
  await out.flush();
  const line = await answers.next();
  return !line.done && new TextDecoder().decode(line.value).trim().toLowerCase() === "y";
}

export async function aclsCommand(args: string[]): Promise<never> {
  return await runTool("acls", async () => {
    const { values } = parseToolArgs(args, options, aclsUsage);
    const action = checkArgs(values);
    const out = new Output();
    const patternType = patternTypeOf(values);
    switch (action) {
      case "add": {
        if (patternType === "ANY" || patternType === "MATCH") throw new UsageError(`A '--resource-pattern-type' value of '${patternType}' is not valid when adding acls.`);
        const toAdd = resourceToEntries(values, patternType);
        if ([...toAdd.values()].some((x) => x.entries.length === 0)) throw new UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.");
        await withCluster(values, async (c) => {
          for (const { resource, entries } of toAdd.values()) {
            printBlock(out, "Adding ACLs for resource", patternText(resource), entries);
            await createAcls(c, entries.map((e) => ({ ...e, ...resource })));
          }
          await listAcls(c, values, out);
        });
        break;
      }
      case "remove": {
        const toRemove = resourceToEntries(values, patternType);
        const answers = stdinLines();
        await withCluster(values, async (c) => {
          for (const { resource, entries } of toRemove.values()) {
            const filter = patternText(resource);
            const question = entries.length === 0
              ? `Are you sure you want to delete all ACLs for resource filter \`${filter}\`? (y/n)`
              : `Are you sure you want to remove ACLs: \n ${entries.map((e) => `\t${entryText(e)}`).join("\n")} \n from resource filter \`${filter}\`? (y/n)`;
            if (!(await confirm(values, out, answers, question))) continue;
            const base = { resourceType: resource.resourceType, resourceName: resource.resourceName, patternType: resource.patternType };
            await deleteAcls(c, entries.length === 0 ? [base] : entries.map((e) => ({ ...base, ...e })));
          }
          await listAcls(c, values, out);
        });
        break;
      }
      case "list":
        await withCluster(values, (c) => listAcls(c, values, out));
        break;
    }
    await out.flush();
  });
}
