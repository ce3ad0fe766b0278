// strand acls --add|--remove|--list: ACLs over the Kafka protocol, with kafka-acls.sh's flags and
// its rules (Kafka's AclCommand): --add makes, for each resource, an ALLOW entry per
// --allow-principal x --allow-host x --operation and a DENY entry per --deny-principal x
// --deny-host x --operation (hosts default to *, the operation to All, the pattern type to
// LITERAL); --remove deletes exactly those entries, or every ACL of the resources when no
// principal is given; --list shows the ACLs of the resources (every ACL without one), optionally
// of --principal only. --producer and --consumer add the operations a producer or consumer needs.
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
import { commonOptionsUsage, list, Output, parseToolArgs, runTool, str, UsageError, type Values, withCluster } from "./tool.ts";

export const aclsUsage = `Usage: strand acls --bootstrap-server HOST:PORT[,HOST:PORT...] (--add | --remove | --list) [options]

Actions:
  --add                      Adds the ACLs the options below describe.
  --remove                   Removes them (every ACL of the resources when no principal is given).
  --list                     Lists the ACLs of the resources (every ACL without a resource).

Resources (repeatable):
  --topic NAME               --group NAME               --transactional-id NAME
  --cluster                  the cluster resource (kafka-cluster)
  --resource-pattern-type T  LITERAL (default), PREFIXED; for --list/--remove also ANY, MATCH

Entries:
  --allow-principal P        e.g. User:alice (repeatable; User:* is everyone)
  --deny-principal P         (repeatable)
  --allow-host H             hosts the allow entries apply to (repeatable; default *)
  --deny-host H              hosts the deny entries apply to (repeatable; default *)
  --operation OP             Read, Write, Create, Delete, Alter, Describe, ClusterAction,
                             DescribeConfigs, AlterConfigs, IdempotentWrite, All (repeatable; default All)
  --producer                 the producer's operations: Write, Describe, Create on the topics
                             (and IdempotentWrite on the cluster with --idempotent)
  --consumer                 the consumer's operations: Read, Describe on the topics, Read on the groups
  --idempotent               with --producer
  --principal P              with --list: only this principal's ACLs (repeatable)
  --force                    accepted for kafka-acls.sh's sake; strand never asks

Options:
${commonOptionsUsage}`;

const options = {
  add: { type: "boolean" as const },
  remove: { type: "boolean" as const },
  list: { type: "boolean" as const },
  topic: { type: "string" as const, multiple: true },
  group: { type: "string" as const, multiple: true },
  "transactional-id": { type: "string" as const, multiple: true },
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
}

function resourcesOf(values: Values): Resource[] {
  const out: Resource[] = [];
  for (const t of list(values, "topic")) out.push({ resourceType: "Topic", resourceName: t });
  for (const g of list(values, "group")) out.push({ resourceType: "Group", resourceName: g });
  for (const x of list(values, "transactional-id")) out.push({ resourceType: "TransactionalId", resourceName: x });
  if (values.cluster === true) out.push({ resourceType: "Cluster", resourceName: "kafka-cluster" });
  return out;
}

function patternTypeOf(values: Values, forAdd: boolean): string {
  const text = (str(values, "resource-pattern-type") ?? "LITERAL").toUpperCase();
  const allowed = forAdd ? ["LITERAL", "PREFIXED"] : ["LITERAL", "PREFIXED", "ANY", "MATCH"];
  if (!allowed.includes(text)) throw new UsageError(`--resource-pattern-type ${text}: use ${allowed.join(", ")}`);
  return text;
}

/** The --operation names, in Kafka's spelling ("describe-configs" → "DescribeConfigs"). */
function operationsOf(values: Values): string[] {
  const ops = list(values, "operation").map((op) => {
    try {
      return aclNames.operation(aclCodes.operation(op));
    } catch (e) {
      throw new UsageError(`--operation ${op}: ${(e as Error).message}`);
    }
  });
  return ops.length === 0 ? ["All"] : ops;
}

function principalsOf(values: Values, name: string): string[] {
  const ps = list(values, name);
  for (const p of ps) if (p.indexOf(":") <= 0) throw new UsageError(`--${name} ${p}: a principal is Type:name, e.g. User:alice`);
  return ps;
}

/** The entries --add makes (or --remove deletes), per resource, as Kafka's AclCommand builds them. */
function entriesFor(values: Values, resources: Resource[], patternType: string): AclEntryView[] {
  const allowPrincipals = principalsOf(values, "allow-principal");
  const denyPrincipals = principalsOf(values, "deny-principal");
  const allowHosts = list(values, "allow-host");
  const denyHosts = list(values, "deny-host");
  const out: AclEntryView[] = [];
  const add = (r: Resource, ops: string[]) => {
    for (const [principals, hosts, permissionType] of [[allowPrincipals, allowHosts, "Allow"], [denyPrincipals, denyHosts, "Deny"]] as const) {
      for (const principal of principals) {
        for (const host of hosts.length === 0 ? ["*"] : hosts) {
          for (const operation of ops) out.push({ ...r, patternType, principal, host, operation, permissionType });
        }
      }
    }
  };
  if (values.producer === true || values.consumer === true) {
    const topics = resources.filter((r) => r.resourceType === "Topic");
    if (topics.length === 0) throw new UsageError("--producer and --consumer need --topic");
    if (values.producer === true) {
      for (const t of topics) add(t, ["Write", "Describe", "Create"]);
      if (values.idempotent === true) add({ resourceType: "Cluster", resourceName: "kafka-cluster" }, ["IdempotentWrite"]);
      for (const x of resources.filter((r) => r.resourceType === "TransactionalId")) add(x, ["Write", "Describe"]);
    }
    if (values.consumer === true) {
      const groups = resources.filter((r) => r.resourceType === "Group");
      if (groups.length === 0) throw new UsageError("--consumer needs --group");
      for (const t of topics) add(t, ["Read", "Describe"]);
      for (const g of groups) add(g, ["Read"]);
    }
  } else {
    const ops = operationsOf(values);
    for (const r of resources) add(r, ops);
  }
  return out;
}

function printByResource(out: Output, title: string, acls: AclEntryView[]): void {
  const byResource = new Map<string, AclEntryView[]>();
  for (const a of acls) {
    const key = `ResourcePattern(resourceType=${a.resourceType.replace(/(?!^)([A-Z])/g, "_$1").toUpperCase()}, name=${a.resourceName}, patternType=${a.patternType})`;
    byResource.set(key, [...(byResource.get(key) ?? []), a]);
  }
  for (const [resource, entries] of byResource) {
    out.text(`${title} \`${resource}\`: \n`);
    for (const e of entries) out.text(` \t${describeAcl(e).replace(/ on ResourcePattern.*$/, "")} \n`);
    out.text("\n");
  }
}

export async function aclsCommand(args: string[]): Promise<never> {
  return await runTool("acls", async () => {
    const { values } = parseToolArgs(args, options, aclsUsage);
    const actions = (["add", "remove", "list"] as const).filter((a) => values[a] === true);
    if (actions.length !== 1) throw new UsageError("one of --add, --remove or --list is required");
    const resources = resourcesOf(values);
    const out = new Output();
    switch (actions[0]) {
      case "add": {
        if (resources.length === 0) throw new UsageError("--add needs a resource: --topic, --group, --transactional-id or --cluster");
        const entries = entriesFor(values, resources, patternTypeOf(values, true));
        if (entries.length === 0) throw new UsageError("--add needs --allow-principal or --deny-principal");
        await withCluster(values, async (c) => {
          await createAcls(c, entries);
          printByResource(out, "Adding ACLs for resource", entries);
        });
        break;
      }
      case "remove": {
        if (resources.length === 0) throw new UsageError("--remove needs a resource: --topic, --group, --transactional-id or --cluster");
        const patternType = patternTypeOf(values, false);
        const hasPrincipal = list(values, "allow-principal").length + list(values, "deny-principal").length > 0;
        const filters: AclFilterView[] = hasPrincipal || values.producer === true || values.consumer === true
          ? entriesFor(values, resources, patternType)
          : resources.map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, patternType }));
        await withCluster(values, async (c) => {
          const deleted = await deleteAcls(c, filters);
          printByResource(out, "Removed ACLs for resource", deleted);
        });
        break;
      }
      case "list": {
        const patternType = patternTypeOf(values, false);
        const principals = principalsOf(values, "principal");
        const filters: AclFilterView[] = resources.length === 0
          ? [{}]
          : resources.map((r) => ({ resourceType: r.resourceType, resourceName: r.resourceName, patternType }));
        await withCluster(values, async (c) => {
          const found: AclEntryView[] = [];
          for (const f of filters) {
            if (principals.length === 0) found.push(...await describeAcls(c, f));
            else for (const principal of principals) found.push(...await describeAcls(c, { ...f, principal }));
          }
          printByResource(out, "Current ACLs for resource", found);
        });
        break;
      }
    }
    await out.flush();
  });
}
