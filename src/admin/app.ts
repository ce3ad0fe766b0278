// The admin HTTP API as a Hono app (createAdminApp): a fetch(Request) → Response function that the
// platform serves (platform.http.serve) and tests may call directly. Routes (JSON unless noted):
//
//   GET    /v1/status/live                     200 while the process serves
//   GET    /v1/status/ready                    200 once logs are recovered and the broker is registered, and every
//                                               partition it should lead can be served, else 503 saying why
//   GET    /v1/log-dirs                        this broker's log dirs (online, free space, appends refused: disk full)
//                                               and the partitions it should lead but cannot serve (at most 100)
//   GET    /v1/cluster                         cluster id, controller, live brokers
//   GET    /v1/brokers                         live brokers
//   GET    /v1/topics                          topics with partition counts and health
//   POST   /v1/topics                          {name, partitions?, replication_factor?, configs?} → 201
//   GET    /v1/topics/{t}                      partitions (leader, replicas, ISR, offsets) and config overrides
//   DELETE /v1/topics/{t}
//   GET    /v1/topics/{t}/partitions           leader, replicas, ISR, log start/end, high watermark, size
//   GET    /v1/topics/{t}/config               every topic key with value and source (DescribeConfigs')
//   PUT    /v1/topics/{t}/config               {set?, delete?, append?, subtract?, validate_only?}: IncrementalAlterConfigs' path
//   GET    /v1/groups                          groups this broker coordinates
//   GET    /v1/groups/{g}                      members, decoded assignments, committed offsets and lag
//   GET    /v1/acls                            ACLs matching the query (resource_type, resource_name, pattern_type
//                                               ANY|MATCH|LITERAL|PREFIXED, principal, host, operation,
//                                               permission_type; absent: any), as {"acls": [...]} (acls.ts)
//   POST   /v1/acls                            {"acls": [...]} → 201; 400 naming each refused one, nothing stored
//   DELETE /v1/acls                            the query's filter (at least one key): {"deleted": [...]}
//                                               (501 for the three without authorizer.class.name)
//   GET    /v1/config                          every broker key: value, source (DYNAMIC_BROKER_CONFIG,
//                                               DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG),
//                                               read_only; and "dynamic": {broker: {k: v}, cluster: {k: v}}
//   PUT    /v1/config                          {set?, delete?, append?, subtract?, scope?, validate_only?}: dynamic
//                                               broker configs (IncrementalAlterConfigs on a BROKER resource);
//                                               scope "broker" (default: this broker, /config/brokers/<id>) or
//                                               "cluster" (every broker, /config/brokers/<default>); only the
//                                               log-default keys and the connection limits are dynamic, any other
//                                               key is a 400 naming it
//   GET    /v1/quotas                          client quotas (users, client ids, both; null name = the default entity),
//                                               filtered by ?user=, ?client_id= (exact), ?user_default, ?client_id_default,
//                                               ?strict; and "throttled": the clients this broker throttled lately
//   PUT    /v1/quotas                          {entity: {user?, client_id?}, set?: {key: number}, delete?: [key],
//                                               validate_only?}: AlterClientQuotas' path; a null name is the default
//   POST   /v1/partitions/{t}/{p}/elect-leader preferred leader election by the controller (forwarded to it)
//   PUT    /v1/log-level                       {level}: the process' log level, at once
//   GET    /v1/stats                           per-topic messages/bytes in and bytes out since start, with clocks (for rates)
//   GET    /v1/transactions                    the transactions this broker coordinates, and the open (and hanging:
//                                              older than transaction.max.timeout.ms) ones on partitions it leads
//   GET    /v1/cluster/brokers|groups|groups/{g}|stats   the whole cluster from any broker (cluster_views.ts)
//   GET    /metrics                            Prometheus text format (broker_metrics.ts)
//   GET    /                                   the dashboard page (HTML; dashboard/), with /dashboard.css and /dashboard.js
//
// Errors are {"error": message} with the status that says why: 400 bad input, 401 missing or
// wrong token, 403 refused, 404 unknown, 409 conflict, 413 body too large, 501 not supported,
// 503 not ready (while the broker starts or stops; or a change the registry could not store for
// lack of descriptors), 504 timed out, 507 a change the registry could not store because its
// disk is full (nothing changed; try again once there is room), 500 a bug (logged).
//
// Mutating methods (POST, PUT, DELETE) need `Authorization: Bearer <admin.auth.token>` when a
// token is configured; without one they are refused (403) unless every admin listener is on a
// loopback address, where only local users can reach them. Reads are open, as /metrics must be
// for Prometheus.

import { Hono } from "hono";
import type { Context } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { HTTPException } from "hono/http-exception";
import {
  applyBrokerOperations,
  applyOperations,
  alterClientQuotas,
  type BrokerServices,
  type ClientQuotas,
  ConfigOperation,
  describeClientQuotas,
  type FilterComponent,
  MatchType,
  type QuotaEntity,
  QuotaEntityType,
  quotaRequestError,
  readClientQuotas,
  ConfigSource,
  describeBrokerConfigs,
  describeTopicConfigs,
} from "../broker/mod.ts";
import { type AclBinding, aclStoreOf, bindingProblem, filterProblem } from "../authorizer/mod.ts";
import { BrokerIdZNode } from "../registry/mod.ts";
import { adminRequestBodyBytesMax, adminTopicWaitMs, ErrorCode, errorName, type Logger } from "../util/mod.ts";
import { mountClusterRoutes } from "./cluster_views.ts";
import { mountDashboard } from "./dashboard/mod.ts";
import { brokerIdHeader } from "./peers.ts";
import { aclFilterKeys, aclJson, parseAclBinding, parseAclFilter } from "./acls.ts";
import { prometheusContentType } from "./metrics.ts";
import {
  brokersView,
  clusterView,
  groupsView,
  logDirsView,
  lookupGroup,
  partitionView,
  statsView,
  topicsView,
  topicView,
  transactionsView,
  unservedPartitions,
} from "./views.ts";

/** What the app reads from a running broker (the Broker class has these). */
export interface AdminTarget {
  services: BrokerServices;
  readonly isActiveController: boolean;
  /** Client quota enforcement (the throttled clients /v1/quotas and the dashboard show). */
  readonly clientQuotas?: ClientQuotas | null;
}

export type BrokerPhase = "starting" | "running" | "stopping";

/** The broker the app serves, as the admin server tracks it across start-up and shutdown. */
export interface AdminSource {
  /** The running broker, or null while it starts or stops. */
  broker(): AdminTarget | null;
  phase(): BrokerPhase;
}

export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];

export interface AdminAppOptions {
  /** Bearer token for mutating routes, or null for none. */
  authToken: string | null;
  /** Every admin listener is on a loopback address (mutations without a token are allowed then). */
  loopbackOnly: boolean;
  /** The Prometheus text for GET /metrics. */
  renderMetrics(): string;
  /** Changes the process' log level; absent when the logger cannot (PUT /v1/log-level answers 501). */
  setLogLevel?: (level: LogLevel) => void;
  logger: Logger;
}

/** An error with its HTTP status, thrown by route code and rendered as {"error": message}. */
class AdminError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 501 | 503 | 504 | 507, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
}

/** The HTTP status for a Kafka error code from the topic and config admins. */
function statusOf(code: number, message: string | null = null): AdminError["status"] | 500 {
  switch (code) {
    // The registry could not store the change: 507 Insufficient Storage when its disk is full,
    // else 503 (out of descriptors, a failed disk): nothing was changed, try again later.
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return /\b(ENOSPC|EDQUOT)\b/.test(message ?? "") ? 507 : 503;
    case ErrorCode.TOPIC_ALREADY_EXISTS:
      return 409;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      return 404;
    case ErrorCode.TOPIC_DELETION_DISABLED:
      return 403;
    case ErrorCode.REQUEST_TIMED_OUT:
      return 504;
    case ErrorCode.NOT_COORDINATOR:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_CONTROLLER:
      return 503;
    case ErrorCode.INVALID_TOPIC_EXCEPTION:
    case ErrorCode.INVALID_PARTITIONS:
    case ErrorCode.INVALID_REPLICATION_FACTOR:
    case ErrorCode.INVALID_REPLICA_ASSIGNMENT:
    case ErrorCode.INVALID_CONFIG:
    case ErrorCode.INVALID_REQUEST:
    case ErrorCode.POLICY_VIOLATION:
    case ErrorCode.INVALID_GROUP_ID:
      return 400;
    default:
      return 500;
  }
}

function failOutcome(outcome: { errorCode: number; errorMessage: string | null }): never {
  const status = statusOf(outcome.errorCode, outcome.errorMessage);
  const message = outcome.errorMessage ?? errorName(outcome.errorCode);
  if (status === 500) throw new Error(`${errorName(outcome.errorCode)}: ${message}`);
  throw new AdminError(status, message, { code: errorName(outcome.errorCode) });
}

const mutating = new Set(["POST", "PUT", "DELETE", "PATCH"]);

/**
 * The body as text, at most adminRequestBodyBytesMax bytes (413 past it, before reading more).
 * Not hono/body-limit: it rebuilds the Request, which reads request.signal, and Deno 2.9 prints a
 * warning about that signal's legacy behaviour into the broker's log stream.
 */
async function boundedText(c: Context): Promise<string> {
  const tooLarge = () => new AdminError(413, `the body is larger than ${adminRequestBodyBytesMax} bytes`);
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > adminRequestBodyBytesMax) throw tooLarge();
  const stream = c.req.raw.body;
  if (stream === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > adminRequestBodyBytesMax) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    all.set(ch, at);
    at += ch.length;
  }
  return new TextDecoder().decode(all);
}

/** The request's JSON body as an object, or 400. */
async function jsonObject(c: Context): Promise<Record<string, unknown>> {
  const text = await boundedText(c);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AdminError(400, "the body is not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AdminError(400, "the body must be a JSON object");
  return body as Record<string, unknown>;
}

function optionalInt(body: Record<string, unknown>, key: string, fallback: number): number {
  const v = body[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new AdminError(400, `${key} must be an integer`);
  return v;
}

/** A map of config keys to values; numbers and booleans are taken as their text. */
function stringMap(body: Record<string, unknown>, key: string): Record<string, string> {
  const v = body[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) throw new AdminError(400, `${key} must be an object of config keys to values`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x !== "string" && typeof x !== "number" && typeof x !== "boolean") throw new AdminError(400, `${key}.${k} must be a string`);
    out[k] = String(x);
  }
  return out;
}

function stringList(body: Record<string, unknown>, key: string): string[] {
  const v = body[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw new AdminError(400, `${key} must be a list of config keys`);
  return v as string[];
}

/** set/delete/append/subtract in a config PUT body, as IncrementalAlterConfigs operations. */
function configOperations(body: Record<string, unknown>, extra: string[] = []) {
  const known = new Set(["set", "delete", "append", "subtract", "validate_only", ...extra]);
  const unknown = Object.keys(body).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new AdminError(400, `unknown field ${unknown[0]}: use ${[...known].join(", ")}`);
  const ops = [
    ...Object.entries(stringMap(body, "set")).map(([name, value]) => ({ name, configOperation: ConfigOperation.SET, value })),
    ...stringList(body, "delete").map((name) => ({ name, configOperation: ConfigOperation.DELETE, value: null })),
    ...Object.entries(stringMap(body, "append")).map(([name, value]) => ({ name, configOperation: ConfigOperation.APPEND, value })),
    ...Object.entries(stringMap(body, "subtract")).map(([name, value]) => ({ name, configOperation: ConfigOperation.SUBTRACT, value })),
  ];
  const names = ops.map((o) => o.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new AdminError(400, `config key ${dup} appears in more than one operation`);
  const validateOnly = body.validate_only ?? false;
  if (typeof validateOnly !== "boolean") throw new AdminError(400, "validate_only must be true or false");
  return { ops, validateOnly };
}

const sourceNames = Object.fromEntries(Object.entries(ConfigSource).map(([name, n]) => [n, name]));

function configEntriesJson(entries: ReturnType<typeof describeBrokerConfigs>) {
  return entries.map((e) => ({
    name: e.name,
    value: e.value,
    source: sourceNames[e.source] ?? "UNKNOWN",
    read_only: e.readOnly,
    sensitive: e.isSensitive,
  }));
}

async function topicConfigJson(s: BrokerServices, topic: string) {
  const overrides = await s.configAdmin.topicOverrides(topic);
  if (overrides === null) throw new AdminError(404, `unknown topic ${topic}`);
  return { topic, configs: configEntriesJson(describeTopicConfigs(s.config, overrides, s.dynamicConfig.values)) };
}

function topicParam(c: Context, s: BrokerServices) {
  const name = c.req.param("topic")!;
  const t = s.metadata.getTopic(name);
  if (t === undefined) throw new AdminError(404, `unknown topic ${name}`);
  return t;
}

export function createAdminApp(source: AdminSource, options: AdminAppOptions): Hono {
  const app = new Hono();
  const log = options.logger;

  /** The running broker's services, or 503 while it starts or stops. */
  const services = (): BrokerServices => {
    const b = source.broker();
    if (b === null) throw new AdminError(503, `the broker is ${source.phase()}`, { phase: source.phase() });
    return b.services;
  };

  app.onError((err, c) => {
    if (err instanceof AdminError) return c.json({ error: err.message, ...err.extra }, err.status);
    if (err instanceof HTTPException) return err.getResponse();
    log.error({ method: c.req.method, path: c.req.path, err: err instanceof Error ? err.stack : String(err) }, "admin request failed");
    return c.json({ error: `internal error: ${err.message}` }, 500);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  // Which broker answered: a peer asking this one (peers.ts) checks it is the broker it meant.
  app.use("*", async (c, next) => {
    await next();
    const b = source.broker();
    if (b !== null) c.header(brokerIdHeader, String(b.services.brokerId));
  });

  // Authorization of mutating routes.
  const tokenCheck = options.authToken === null ? null : bearerAuth({
    token: options.authToken,
    realm: "strand admin",
    noAuthenticationHeader: { message: { error: "this route needs Authorization: Bearer <admin.auth.token>" } },
    invalidAuthenticationHeader: { message: { error: "the Authorization header is not a bearer token" } },
    invalidToken: { message: { error: "wrong token" } },
  });
  app.use("*", async (c, next) => {
    if (!mutating.has(c.req.method)) return await next();
    if (tokenCheck !== null) return await tokenCheck(c, next);
    if (!options.loopbackOnly) {
      throw new AdminError(403, "changes are refused: the admin listener is not loopback-only and no admin.auth.token is configured");
    }
    await next();
  });

  // --- status

  app.get("/v1/status/live", (c) => c.json({ status: "live" }));

  app.get("/v1/status/ready", async (c) => {
    const b = source.broker();
    if (b === null) return c.json({ error: `not ready: the broker is ${source.phase()}`, phase: source.phase() }, 503);
    const s = b.services;
    // Registered means the ephemeral znode is there now (a lost registry session removes it).
    let registered = false;
    try {
      registered = (await s.registry.exists(BrokerIdZNode.path(s.brokerId))) !== null;
    } catch (e) {
      return c.json({ error: `not ready: the registry does not answer (${(e as Error).message})`, phase: "running" }, 503);
    }
    if (!registered) return c.json({ error: `not ready: broker ${s.brokerId} is not registered`, phase: "running" }, 503);
    // Leading a partition it cannot serve (a failed dir, a log not opened for lack of file
    // descriptors) the broker would take produces it can only refuse: not ready.
    const unserved = unservedPartitions(s);
    if (unserved.length > 0) {
      const first = unserved.slice(0, 5).map((p) => p.reason).join("; ");
      return c.json({
        error: `not ready: ${unserved.length} partition(s) this broker should lead cannot be served: ${first}${unserved.length > 5 ? "; …" : ""}`,
        phase: "running",
        unserved_partitions: unserved.slice(0, 100),
      }, 503);
    }
    // broker_epoch (the registration's czxid) changes with every start: a rolling restart tells a
    // restarted broker from one that has not gone down yet.
    return c.json({ status: "ready", broker_id: s.brokerId, broker_epoch: String(s.brokerEpoch()) });
  });

  // --- cluster

  app.get("/v1/cluster", (c) => c.json(clusterView(services())));
  app.get("/v1/brokers", (c) => c.json(brokersView(services())));
  app.get("/v1/log-dirs", (c) => {
    const s = services();
    return c.json({ log_dirs: logDirsView(s), unserved_partitions: unservedPartitions(s).slice(0, 100) });
  });

  // --- topics

  app.get("/v1/topics", (c) => c.json(topicsView(services())));

  app.post("/v1/topics", async (c) => {
    const s = services();
    const body = await jsonObject(c);
    const name = body.name;
    if (typeof name !== "string" || name === "") throw new AdminError(400, "name must be a topic name");
    const spec = {
      name,
      numPartitions: optionalInt(body, "partitions", s.config.numPartitions),
      replicationFactor: optionalInt(body, "replication_factor", s.config.defaultReplicationFactor),
      assignment: null,
      configs: stringMap(body, "configs"),
    };
    const outcome = await s.topicAdmin.createTopic(spec, false, adminTopicWaitMs);
    if (outcome.errorCode !== ErrorCode.NONE) failOutcome(outcome);
    const t = s.metadata.getTopic(name);
    log.info({ topic: name, partitions: spec.numPartitions, replicationFactor: spec.replicationFactor }, "topic created through the admin API");
    return c.json(t === undefined ? { name } : topicView(s, t), 201);
  });

  app.get("/v1/topics/:topic", (c) => {
    const s = services();
    return c.json(topicView(s, topicParam(c, s)));
  });

  app.delete("/v1/topics/:topic", async (c) => {
    const s = services();
    const name = c.req.param("topic");
    if (!s.config.deleteTopicEnable) failOutcome({ errorCode: ErrorCode.TOPIC_DELETION_DISABLED, errorMessage: "delete.topic.enable is false" });
    const outcome = await s.topicAdmin.deleteTopic(name, adminTopicWaitMs);
    if (outcome.errorCode !== ErrorCode.NONE) failOutcome(outcome);
    log.info({ topic: name }, "topic deleted through the admin API");
    return c.json({ name, deleted: true });
  });

  app.get("/v1/topics/:topic/partitions", (c) => {
    const s = services();
    const t = topicParam(c, s);
    return c.json([...t.partitions].sort((a, b) => a.partition - b.partition).map((p) => partitionView(s, p)));
  });

  app.get("/v1/topics/:topic/config", async (c) => c.json(await topicConfigJson(services(), c.req.param("topic"))));

  app.put("/v1/topics/:topic/config", async (c) => {
    const s = services();
    const topic = c.req.param("topic");
    const { ops, validateOnly } = configOperations(await jsonObject(c));
    const dynamic = s.dynamicConfig.values;
    const outcome = await s.configAdmin.alterTopicConfig(topic, (current) => applyOperations(s.config, current, ops, dynamic), validateOnly);
    if (outcome.errorCode !== ErrorCode.NONE) failOutcome(outcome);
    if (!validateOnly && ops.length > 0) log.info({ topic, keys: ops.map((o) => o.name) }, "topic config changed through the admin API");
    return c.json({ ...(await topicConfigJson(s, topic)), validate_only: validateOnly });
  });

  // --- groups

  app.get("/v1/groups", (c) => c.json(groupsView(services())));

  app.get("/v1/groups/:group", (c) => {
    const s = services();
    const groupId = c.req.param("group");
    const found = lookupGroup(s, groupId);
    if (found.found) return c.json(found.view);
    if (found.errorCode === ErrorCode.NONE) throw new AdminError(404, `unknown group ${groupId}`);
    if (found.errorCode === ErrorCode.NOT_COORDINATOR) {
      throw new AdminError(404, `broker ${s.brokerId} is not the coordinator of group ${groupId}; ask the leader of its __consumer_offsets partition`, {
        code: errorName(found.errorCode),
      });
    }
    failOutcome({ errorCode: found.errorCode, errorMessage: null });
  });

  // --- broker config

  const brokerConfigJson = (s: BrokerServices) => {
    const dynamic = s.dynamicConfig.values;
    return {
      broker_id: s.brokerId,
      configs: configEntriesJson(describeBrokerConfigs(s.config, dynamic)),
      dynamic: { broker: Object.fromEntries(dynamic.perBroker), cluster: Object.fromEntries(dynamic.clusterDefault) },
    };
  };

  // --- ACLs (the authorizer's; the admin token, not a Kafka principal, guards changes)

  const aclStore = (s: BrokerServices) => {
    const store = aclStoreOf(s.authorizer);
    if (store === null) throw new AdminError(501, "no authorizer is configured (authorizer.class.name)", { code: "SECURITY_DISABLED" });
    return store;
  };
  const aclFilter = (c: Context, needOne: boolean) => {
    const q = c.req.query();
    const unknown = Object.keys(q).filter((k) => !aclFilterKeys.includes(k));
    if (unknown.length > 0) throw new AdminError(400, `unknown query parameter ${unknown[0]} (${aclFilterKeys.join(", ")})`);
    if (needOne && Object.keys(q).length === 0) throw new AdminError(400, "a filter is required (e.g. ?resource_type=topic&resource_name=t; ?resource_type=any deletes every ACL)");
    const f = parseAclFilter(q);
    if (typeof f === "string") throw new AdminError(400, f);
    const problem = filterProblem(f);
    if (problem !== null) throw new AdminError(400, problem);
    return f;
  };

  app.get("/v1/acls", (c) => {
    const store = aclStore(services());
    return c.json({ acls: store.acls(aclFilter(c, false)).map(aclJson) });
  });

  app.post("/v1/acls", async (c) => {
    const store = aclStore(services());
    const body = await jsonObject(c);
    if (!Array.isArray(body.acls) || body.acls.length === 0) throw new AdminError(400, "acls must be a non-empty list of ACLs");
    const bindings = body.acls.map(parseAclBinding);
    const bad = bindings.map((b, i) => typeof b === "string" ? `acls[${i}]: ${b}` : null).filter((m) => m !== null);
    const problems = bindings.map((b, i) => typeof b === "string" ? null : bindingProblem(b) === null ? null : `acls[${i}]: ${bindingProblem(b)}`);
    const refused = [...bad, ...problems.filter((m) => m !== null)];
    if (refused.length > 0) throw new AdminError(400, refused.join("; "));
    const valid = bindings as AclBinding[];
    const results = await store.createAcls(valid);
    const failed = results.findIndex((r) => r.errorCode !== ErrorCode.NONE);
    if (failed >= 0) failOutcome(results[failed]);
    log.info({ acls: valid.map(aclJson) }, "ACLs created through the admin API");
    return c.json({ created: valid.map(aclJson) }, 201);
  });

  app.delete("/v1/acls", async (c) => {
    const store = aclStore(services());
    const [result] = await store.deleteAcls([aclFilter(c, true)]);
    if (result.errorCode !== ErrorCode.NONE) failOutcome(result);
    const failed = result.deleted.find((d) => d.errorCode !== ErrorCode.NONE);
    if (failed !== undefined) failOutcome(failed);
    const deleted = result.deleted.map(aclJson);
    log.info({ acls: deleted }, "ACLs deleted through the admin API");
    return c.json({ deleted });
  });

  app.get("/v1/config", (c) => c.json(brokerConfigJson(services())));

  app.put("/v1/config", async (c) => {
    const s = services();
    const body = await jsonObject(c);
    const { ops, validateOnly } = configOperations(body, ["scope"]);
    const scope = body.scope ?? "broker";
    if (scope !== "broker" && scope !== "cluster") throw new AdminError(400, `scope must be "broker" or "cluster"`);
    const resourceName = scope === "cluster" ? "" : String(s.brokerId);
    const outcome = await s.dynamicConfig.alter(
      resourceName,
      (current) => applyBrokerOperations(s.config, resourceName, current, ops.map((o) => ({ ...o, value: o.value?.trim() ?? null })), s.dynamicConfig.values),
      validateOnly,
    );
    if (outcome.errorCode !== ErrorCode.NONE) failOutcome(outcome);
    if (!validateOnly && ops.length > 0) log.info({ scope, keys: ops.map((o) => o.name) }, "dynamic broker config changed through the admin API");
    return c.json({ ...brokerConfigJson(s), scope, validate_only: validateOnly });
  });

  // --- partitions

  // --- client quotas

  const quotaEntityJson = (e: QuotaEntity) => ({
    ...(e.user === undefined ? {} : { user: e.user }),
    ...(e.clientId === undefined ? {} : { client_id: e.clientId }),
    ...(e.ip === undefined ? {} : { ip: e.ip }),
  });

  app.get("/v1/quotas", async (c) => {
    const b = source.broker();
    const s = services();
    const q = c.req.query();
    const components: FilterComponent[] = [];
    const component = (entityType: string, name: string | undefined, isDefault: boolean) => {
      if (name !== undefined && isDefault) throw new AdminError(400, `give ${entityType} a name or ask for its default, not both`);
      if (name !== undefined) components.push({ entityType, matchType: MatchType.Exact, match: name });
      else if (isDefault) components.push({ entityType, matchType: MatchType.Default, match: null });
    };
    component(QuotaEntityType.User, q.user, "user_default" in q);
    component(QuotaEntityType.ClientId, q.client_id, "client_id_default" in q);
    component(QuotaEntityType.Ip, q.ip, "ip_default" in q);
    let found;
    try {
      found = describeClientQuotas(await readClientQuotas(s.registry), components, "strict" in q);
    } catch (e) {
      const refused = quotaRequestError(e);
      if (refused === null) throw e;
      failOutcome(refused);
    }
    const throttled = (b?.clientQuotas?.managers ?? []).flatMap((m) => m.stats())
      .filter((t) => t.throttledTotal > 0)
      .map((t) => ({
        type: t.type,
        user: t.user,
        client_id: t.clientId,
        quota: t.bound,
        rate: Math.round(t.rate * 100) / 100,
        throttled_total: t.throttledTotal,
        throttle_time_ms_total: t.throttleTimeMsTotal,
        last_throttle_time_ms: t.lastThrottleTimeMs,
      }));
    return c.json({
      quotas: found.map((e) => ({ entity: quotaEntityJson(e.entity), values: Object.fromEntries(e.values) })),
      throttled,
    });
  });

  app.put("/v1/quotas", async (c) => {
    const s = services();
    const body = await jsonObject(c);
    const entity = body.entity;
    if (typeof entity !== "object" || entity === null || Array.isArray(entity)) {
      throw new AdminError(400, "entity must be an object naming user and/or client_id, or ip (null: the default)");
    }
    const parts: { entityType: string; entityName: string | null }[] = [];
    for (const [k, v] of Object.entries(entity as Record<string, unknown>)) {
      const type = k === "user" ? QuotaEntityType.User : k === "client_id" ? QuotaEntityType.ClientId : k === "ip" ? QuotaEntityType.Ip : null;
      if (type === null) throw new AdminError(400, `unknown entity part ${k}: user, client_id or ip`);
      if (v !== null && typeof v !== "string") throw new AdminError(400, `entity.${k} must be a name or null (the default)`);
      parts.push({ entityType: type, entityName: v as string | null });
    }
    const setValues = body.set ?? {};
    if (typeof setValues !== "object" || setValues === null || Array.isArray(setValues)) throw new AdminError(400, "set must be an object of key: number");
    const ops = Object.entries(setValues as Record<string, unknown>).map(([key, value]) => {
      if (typeof value !== "number") throw new AdminError(400, `set.${key} must be a number`);
      return { key, value, remove: false };
    });
    for (const key of stringList(body, "delete")) ops.push({ key, value: 0, remove: true });
    if (ops.length === 0) throw new AdminError(400, "nothing to change: give set and/or delete");
    const validateOnly = body.validate_only === true;
    const [result] = await alterClientQuotas(s.registry, [{ entity: parts, ops }], validateOnly, s.resolveHost);
    if (result.errorCode !== ErrorCode.NONE) failOutcome(result as { errorCode: number; errorMessage: string | null });
    if (!validateOnly) log.info({ entity: parts, keys: ops.map((o) => o.key) }, "client quotas changed through the admin API");
    return c.json({ entity: entity, validate_only: validateOnly });
  });

  app.post("/v1/partitions/:topic/:partition/elect-leader", async (c) => {
    const s = services();
    const t = topicParam(c, s);
    const text = c.req.param("partition");
    const index = /^\d{1,9}$/.test(text) ? Number(text) : -1;
    const p = t.partitions.find((q) => q.partition === index);
    if (p === undefined) throw new AdminError(404, `unknown partition ${t.name}-${text}`);
    const [r] = await s.electLeaders(0, [{ topic: t.name, partition: index }]);
    const result = errorName(r.errorCode);
    const after = s.metadata.getTopic(t.name)?.partitions.find((q) => q.partition === index);
    if (r.errorCode === ErrorCode.NONE || r.errorCode === ErrorCode.ELECTION_NOT_NEEDED) {
      return c.json({ topic: t.name, partition: index, preferred_leader: p.replicas[0], leader: after?.leader ?? p.leader, result });
    }
    const status = r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      ? 404
      : r.errorCode === ErrorCode.NOT_CONTROLLER
      ? 503
      : r.errorCode === ErrorCode.KAFKA_STORAGE_ERROR
      ? statusOf(r.errorCode, r.errorMessage) as 503 | 507
      : 409;
    throw new AdminError(status, r.errorMessage ?? `leader election for ${t.name}-${index} failed: ${result}`, { result });
  });

  // --- logging

  app.put("/v1/log-level", async (c) => {
    const body = await jsonObject(c);
    const level = body.level;
    if (typeof level !== "string" || !(logLevels as readonly string[]).includes(level)) {
      throw new AdminError(400, `level must be one of ${logLevels.join(", ")}`);
    }
    if (options.setLogLevel === undefined) throw new AdminError(501, "this process' logger cannot change its level");
    options.setLogLevel(level as LogLevel);
    log.info({ level }, "log level changed through the admin API");
    return c.json({ level });
  });

  // --- metrics and the dashboard

  app.get("/v1/stats", (c) => c.json(statsView(services())));
  app.get("/v1/transactions", (c) => c.json(transactionsView(services())));
  mountClusterRoutes(app, services, options.authToken);
  mountDashboard(app);

  app.get("/metrics", (c) => c.body(options.renderMetrics(), 200, { "content-type": prometheusContentType }));

  return app;
}
