// strand quotas: client quotas over the Kafka protocol (DescribeClientQuotas, AlterClientQuotas),
// shaped like kafka-configs.sh for quotas:
//
//   strand quotas --describe --entity-type users --entity-name alice [--entity-type clients --entity-default]
//   strand quotas --alter --entity-type clients --entity-name app --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152
//   strand quotas --alter --entity-type users --entity-default --delete-config request_percentage
//   strand quotas --alter --entity-type ips --entity-name 10.0.0.7 --add-config connection_creation_rate=10
//
// --entity-type and --entity-name/--entity-default pair up in the order given (users and clients
// together name a user's client; ips stands alone); --user NAME, --client NAME, --ip NAME,
// --user-defaults, --client-defaults, --ip-defaults are kafka-configs.sh's shorthands.
// --describe prints Kafka's lines ("Quota configs for user-principal 'alice' are
// producer_byte_rate=1048576.0"); with an entity type and no name it lists every entity of that type.
import { alterClientQuotas, type ClientQuotaEntity, type ClientQuotaFilterComponent, describeClientQuotas } from "../client/mod.ts";
import { commonOptionsUsage, Output, parseToolArgs, runTool, str, UsageError, withCluster } from "./tool.ts";

export const quotasUsage = `Usage: strand quotas --bootstrap-server HOST:PORT[,HOST:PORT...] (--describe | --alter) [options]

Actions:
  --describe                     the quotas of the entities named (every entity without any)
  --alter                        change one entity's quotas with --add-config and/or --delete-config

Entities (as kafka-configs.sh):
  --entity-type users|clients|ips
                                 repeat it with clients after users for a user's client id
  --entity-name NAME             the name for the --entity-type at the same position
  --entity-default               the default entity for the --entity-type at the same position
  --user NAME, --client NAME, --ip ADDRESS
                                 shorthands for --entity-type users/clients/ips --entity-name NAME
  --user-defaults, --client-defaults, --ip-defaults
                                 shorthands for --entity-type users/clients/ips --entity-default

Changes (--alter):
  --add-config K=V[,K=V...]      producer_byte_rate, consumer_byte_rate (bytes/s), request_percentage,
                                 controller_mutation_rate; for ips only connection_creation_rate
                                 (new connections per second from that address)
  --delete-config K[,K...]       remove keys
  --validate-only                let the broker check the change without applying it

Options:
${commonOptionsUsage}`;

const options = {
  describe: { type: "boolean" as const },
  alter: { type: "boolean" as const },
  "entity-type": { type: "string" as const, multiple: true },
  "entity-name": { type: "string" as const, multiple: true },
  "entity-default": { type: "boolean" as const, multiple: true },
  user: { type: "string" as const },
  client: { type: "string" as const },
  ip: { type: "string" as const },
  "user-defaults": { type: "boolean" as const },
  "client-defaults": { type: "boolean" as const },
  "ip-defaults": { type: "boolean" as const },
  "add-config": { type: "string" as const },
  "delete-config": { type: "string" as const },
  "validate-only": { type: "boolean" as const },
};

type EntityType = "user" | "client-id" | "ip";
type Part = { type: EntityType; name: string | null | undefined };

const entityTypes: Record<string, EntityType> = { users: "user", clients: "client-id", ips: "ip" };
const typeNames: Record<EntityType, string> = { user: "users", "client-id": "clients", ip: "ips" };

/** The entity parts, types paired with names and defaults in command-line order. */
function entityParts(args: string[]): Part[] {
  const types: EntityType[] = [];
  const names: (string | null)[] = [];
  const shorthand: Part[] = [];
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].startsWith("--") && args[i].includes("=") ? [args[i].slice(0, args[i].indexOf("=")), args[i].slice(args[i].indexOf("=") + 1)] : [args[i], undefined];
    const value = () => inline ?? args[++i];
    if (flag === "--entity-type") {
      const t = value();
      const type = entityTypes[t];
      if (type === undefined) throw new UsageError(`--entity-type must be users, clients or ips, not "${t}"`);
      types.push(type);
    } else if (flag === "--entity-name") names.push(value());
    else if (flag === "--entity-default") names.push(null);
    else if (flag === "--user") shorthand.push({ type: "user", name: value() });
    else if (flag === "--client") shorthand.push({ type: "client-id", name: value() });
    else if (flag === "--ip") shorthand.push({ type: "ip", name: value() });
    else if (flag === "--ip-defaults") shorthand.push({ type: "ip", name: null });
    else if (flag === "--user-defaults") shorthand.push({ type: "user", name: null });
    else if (flag === "--client-defaults") shorthand.push({ type: "client-id", name: null });
    else if (flag === "--add-config" || flag === "--delete-config" || flag === "--bootstrap-server" || flag === "--command-config" || flag === "--request-timeout-ms") {
      if (inline === undefined) i++;
    }
  }
  if (names.length > types.length) throw new UsageError("more --entity-name/--entity-default than --entity-type");
  const parts: Part[] = [...types.map((type, i) => ({ type, name: names[i] })), ...shorthand];
  if (new Set(parts.map((p) => p.type)).size !== parts.length) throw new UsageError("each entity type (users, clients, ips) may be named once");
  if (parts.some((p) => p.type === "ip") && parts.length > 1) throw new UsageError("ips cannot be combined with users or clients");
  for (const p of parts) if (p.name === "") throw new UsageError(`an empty ${p.type} name; use --entity-default for the default entity`);
  // Users first, as Kafka orders a user's client: users/<u>/clients/<c>.
  return parts.sort((a, b) => (a.type === b.type ? 0 : a.type === "user" ? -1 : 1));
}

/** --add-config's K=V pairs as numbers. */
function addedConfigs(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (text === undefined) return out;
  for (const item of text.split(",")) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`--add-config takes KEY=VALUE pairs, not "${item}"`);
    const key = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    const value = Number(raw);
    if (raw === "" || Number.isNaN(value)) throw new UsageError(`--add-config ${key}: "${raw}" is not a number`);
    out[key] = value;
  }
  return out;
}

/** A double as Java prints it (kafka-configs.sh shows 1048576.0). */
function javaDouble(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e7 ? v.toFixed(1) : String(v);
}

function describeEntity(entity: ClientQuotaEntity): string {
  const parts: string[] = [];
  for (const [type, label] of [["user", "user-principal"], ["client-id", "client-id"], ["ip", "ip"]] as const) {
    if (!(type in entity)) continue;
    const name = entity[type];
    parts.push(name === null ? `the default ${label}` : `${label} '${name}'`);
  }
  return parts.join(", ");
}

export async function quotasCommand(args: string[]): Promise<never> {
  return await runTool("quotas", async () => {
    const { values } = parseToolArgs(args, options, quotasUsage);
    if (values.describe === values.alter) throw new UsageError("give exactly one of --describe and --alter");
    const parts = entityParts(args);
    const out = new Output();
    if (values.describe) {
      if (str(values, "add-config") !== undefined || str(values, "delete-config") !== undefined) throw new UsageError("--add-config and --delete-config go with --alter");
      const components: ClientQuotaFilterComponent[] = parts.map((p) => (p.name === undefined ? { entityType: p.type } : { entityType: p.type, match: p.name }));
      await withCluster(values, async (c) => {
        const found = await describeClientQuotas(c, components, components.length > 0);
        found.sort((a, b) => describeEntity(a.entity).localeCompare(describeEntity(b.entity)));
        for (const q of found) {
          const text = Object.entries(q.values).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${javaDouble(v)}`).join(", ");
          out.text(`Quota configs for ${describeEntity(q.entity)} are ${text}\n`);
        }
      });
    } else {
      if (parts.length === 0) throw new UsageError("--alter needs an entity: --entity-type users|clients|ips with --entity-name or --entity-default");
      const unnamed = parts.find((p) => p.name === undefined);
      if (unnamed !== undefined) throw new UsageError(`--alter needs --entity-name or --entity-default for ${typeNames[unnamed.type]}`);
      const set = addedConfigs(str(values, "add-config"));
      const remove = (str(values, "delete-config") ?? "").split(",").map((k) => k.trim()).filter((k) => k !== "");
      if (Object.keys(set).length === 0 && remove.length === 0) throw new UsageError("--alter needs --add-config and/or --delete-config");
      const entity: ClientQuotaEntity = Object.fromEntries(parts.map((p) => [p.type, p.name as string | null]));
      const validateOnly = values["validate-only"] === true;
      await withCluster(values, async (c) => {
        await alterClientQuotas(c, entity, set, remove, validateOnly);
        out.text(`${validateOnly ? "Validated" : "Completed updating"} quota configs for ${describeEntity(entity)}.\n`);
      });
    }
    await out.flush();
  });
}
