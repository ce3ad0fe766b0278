// strand cluster rolling-restart: restarts every broker in turn, as an operator does by hand, over
// the brokers' admin HTTP APIs. From any one broker's API (--admin-url) it reads the live brokers,
// the controller and each broker's own admin address (/v1/cluster/brokers, published by each
// broker in the registry); then for each broker, the controller last:
//
//   1. wait until no partition is under-replicated or offline in any broker's view (/v1/topics),
//      so a broker is never taken down while another replica is out of the ISR;
//   2. note its registration epoch (/v1/status/ready's broker_epoch), run the operator's restart
//      command (a SIGTERM there makes strand's controlled shutdown move its leaderships first);
//   3. wait until it is ready (/v1/status/ready 200) under a new epoch, i.e. really restarted;
//   4. wait again for no under-replicated partition: the restarted broker is back in every ISR.
//
// Each broker has --broker-timeout-ms for all of that; past it, or when the command fails, the
// roll stops there (exit 1) and the brokers after it are left alone.
//
// The command is a template split into words here, like a shell would split it (quotes,
// backslashes), with {id}, {host} and {port} replaced inside each word; it runs without a shell,
// so nothing from the registry (a host name) is ever parsed as shell syntax, and a host that is
// not a plain name or address is refused, so it cannot pass for an option (ssh -oProxyCommand=…).

import process from "node:process";
import { spawn } from "node:child_process";
import { int, list, Output, str, UsageError, type Values } from "./tool.ts";

export const rollingRestartUsage = `Usage: strand cluster rolling-restart --admin-url URL --restart-command TEMPLATE [options]

Restarts every broker in turn, the controller last. Before each broker and after it is back:
no under-replicated or offline partition; after its restart command: /v1/status/ready, under a
new registration.

Options:
  --admin-url URL              any broker's admin API (e.g. http://host1:9644); repeat or comma-separate
                               for fallbacks. Each broker's own address comes from /v1/cluster/brokers.
  --restart-command TEMPLATE   what restarts one broker, with {id}, {host} and {port} (its Kafka
                               listener's) replaced, run without a shell; e.g.
                               'ssh {host} sudo systemctl restart strand@{id}'
  --dry-run                    print the plan and the commands, run nothing
  --broker-timeout-ms MS       per broker: command, readiness and replication (default 600000)
  --poll-interval-ms MS        between readiness checks (default 1000)
  -h, --help                   this text`;

export const rollingRestartOptions = {
  "admin-url": { type: "string" as const, multiple: true },
  "restart-command": { type: "string" as const },
  "dry-run": { type: "boolean" as const },
  "broker-timeout-ms": { type: "string" as const },
  "poll-interval-ms": { type: "string" as const },
};

/** Bound of one admin request of the tool (a hung broker must not stall the roll). */
const adminRequestMs = 5_000;

interface PlanBroker {
  id: number;
  host: string;
  port: number;
  adminUrl: string;
  isController: boolean;
}

class RollError extends Error {
  override name = "RollError";
}

/** Splits a command template into words as a POSIX shell would (quotes, backslashes), nothing else. */
export function splitWords(template: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch === "'") {
      const end = template.indexOf("'", i + 1);
      if (end < 0) throw new UsageError("--restart-command: unterminated '");
      word += template.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < template.length && template[j] !== '"'; j++) {
        if (template[j] === "\\" && j + 1 < template.length && '"\\$`'.includes(template[j + 1])) j++;
        word += template[j];
      }
      if (j >= template.length) throw new UsageError('--restart-command: unterminated "');
      i = j;
      inWord = true;
    } else if (ch === "\\" && i + 1 < template.length) {
      word += template[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new UsageError("--restart-command is empty");
  return words;
}

/** The template's words for one broker. */
export function commandFor(words: string[], b: { id: number; host: string; port: number }): string[] {
  // A registered host is a name or an address; anything else (a leading "-", spaces, quotes) is refused.
  if (!/^[A-Za-z0-9_.:\[\]][A-Za-z0-9_.:\[\]-]*$/.test(b.host) || b.host.startsWith("-")) {
    throw new RollError(`broker ${b.id}'s host ${JSON.stringify(b.host)} is not a plain host name or address`);
  }
  return words.map((w) => w.replaceAll("{id}", String(b.id)).replaceAll("{host}", b.host).replaceAll("{port}", String(b.port)));
}

const shellQuote = (w: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`);

async function getJson(url: string): Promise<{ status: number; body: unknown; from: string | null }> {
  const res = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(adminRequestMs) });
  const from = res.headers.get("x-strand-broker-id");
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON
  }
  return { status: res.status, body, from };
}

/** The brokers in restart order (the controller last), from the first --admin-url that answers. */
async function plan(adminUrls: string[]): Promise<PlanBroker[]> {
  const problems: string[] = [];
  for (const url of adminUrls) {
    try {
      const r = await getJson(`${url.replace(/\/+$/, "")}/v1/cluster/brokers`);
      if (r.status !== 200 || !Array.isArray(r.body)) {
        problems.push(`${url}: ${r.status} ${JSON.stringify(r.body)}`);
        continue;
      }
      const brokers = (r.body as { id: number; host: string; port: number; is_controller: boolean; admin_url: string | null }[]).map((b) => {
        if (b.admin_url === null) throw new RollError(`broker ${b.id}'s admin API address is not published (is admin.listeners set there?)`);
        return { id: b.id, host: b.host, port: b.port, adminUrl: b.admin_url, isController: b.is_controller };
      });
      // A loopback admin listener (the default) is published as 127.0.0.1 by every broker: from
      // here they would all be one broker.
      const shared = brokers.find((b, i) => brokers.findIndex((x) => x.adminUrl === b.adminUrl) !== i);
      if (shared !== undefined) {
        throw new RollError(`several brokers publish the admin address ${shared.adminUrl}: give admin.listeners an address this host can reach on each broker`);
      }
      return brokers.sort((a, b) => (a.isController !== b.isController ? (a.isController ? 1 : -1) : a.id - b.id));
    } catch (e) {
      if (e instanceof RollError) throw e;
      problems.push(`${url}: ${(e as Error).message}`);
    }
  }
  throw new RollError(`no admin API answered: ${problems.join("; ")}`);
}

/** Under-replicated and offline partitions as the worst broker sees them, or why it cannot say. */
async function replicationProblems(brokers: PlanBroker[]): Promise<string | null> {
  const views = await Promise.all(brokers.map(async (b) => {
    try {
      const r = await getJson(`${b.adminUrl}/v1/topics`);
      if (r.from !== String(b.id)) return `${b.adminUrl} answers as broker ${r.from ?? "unknown"}, not ${b.id}`;
      if (r.status !== 200 || !Array.isArray(r.body)) return `broker ${b.id}: ${r.status}`;
      const topics = r.body as { name: string; under_replicated_partitions: number; offline_partitions: number }[];
      const under = topics.reduce((a, t) => a + t.under_replicated_partitions, 0);
      const offline = topics.reduce((a, t) => a + t.offline_partitions, 0);
      if (under === 0 && offline === 0) return null;
      const names = topics.filter((t) => t.under_replicated_partitions + t.offline_partitions > 0).slice(0, 3).map((t) => t.name);
      return `broker ${b.id} sees ${under} under-replicated and ${offline} offline partition(s) (${names.join(", ")})`;
    } catch (e) {
      return `broker ${b.id}'s admin API: ${(e as Error).message}`;
    }
  }));
  const bad = views.filter((v): v is string => v !== null);
  return bad.length === 0 ? null : bad.join("; ");
}

/** The broker's registration epoch when it is ready, else null (and why). */
async function readiness(b: PlanBroker): Promise<{ epoch: string | null; why: string }> {
  try {
    const r = await getJson(`${b.adminUrl}/v1/status/ready`);
    const body = r.body as { broker_epoch?: string; broker_id?: number; error?: string } | null;
    if (r.status === 200 && body?.broker_id === b.id) return { epoch: body.broker_epoch ?? "", why: "" };
    return { epoch: null, why: body?.error ?? `status ${r.status}` };
  } catch (e) {
    return { epoch: null, why: (e as Error).message };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs argv without a shell; resolves with its exit code (killed at the deadline). */
function runCommand(argv: string[], deadlineMs: number): Promise<{ code: number | null; error: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "inherit", "inherit"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), Math.max(0, deadlineMs - Date.now()));
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, error: e.message });
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, error: signal === null ? null : `killed by ${signal}` });
    });
  });
}

async function waitFor(what: string, deadlineMs: number, pollMs: number, check: () => Promise<string | null>): Promise<void> {
  let why = await check();
  while (why !== null) {
    if (Date.now() > deadlineMs) throw new RollError(`timed out waiting for ${what}: ${why}`);
    await sleep(pollMs);
    why = await check();
  }
}

export async function rollingRestart(values: Values, out: Output): Promise<number> {
  const adminUrls = list(values, "admin-url").flatMap((u) => u.split(",")).map((u) => u.trim()).filter((u) => u !== "");
  if (adminUrls.length === 0) throw new UsageError("--admin-url is required");
  const dryRun = values["dry-run"] === true;
  const template = str(values, "restart-command");
  if (template === undefined && !dryRun) throw new UsageError("--restart-command is required (or --dry-run)");
  const words = template === undefined ? null : splitWords(template);
  const timeoutMs = int(values, "broker-timeout-ms", 600_000, 1);
  const pollMs = int(values, "poll-interval-ms", 1_000, 10, 60_000);
  const say = async (line: string) => {
    out.text(`${line}\n`);
    await out.flush();
  };
  try {
    const brokers = await plan(adminUrls);
    const order = brokers.map((b) => `${b.id}${b.isController ? " (controller)" : ""}`).join(", ");
    await say(`Rolling restart of ${brokers.length} broker(s), in this order: ${order}`);
    for (const [i, b] of brokers.entries()) {
      const cmd = words === null ? ["(no --restart-command)"] : commandFor(words, b);
      await say(`  ${i + 1}. broker ${b.id} at ${b.host}:${b.port}, admin ${b.adminUrl}: ${cmd.map(shellQuote).join(" ")}`);
    }
    if (dryRun) return 0;
    for (const [i, b] of brokers.entries()) {
      const step = `[${i + 1}/${brokers.length}] broker ${b.id}`;
      const started = Date.now();
      const deadline = started + timeoutMs;
      const secs = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
      await waitFor("no under-replicated partitions before the restart", deadline, pollMs, () => replicationProblems(brokers));
      const before = await readiness(b);
      const cmd = commandFor(words!, b);
      await say(`${step}: running ${cmd.map(shellQuote).join(" ")}`);
      const r = await runCommand(cmd, deadline);
      if (r.code !== 0) throw new RollError(`${step}: the restart command ${r.error !== null ? `failed: ${r.error}` : `exited ${r.code}`}; stopping the roll here`);
      await say(`${step}: command done after ${secs()}; waiting for it to be ready`);
      await waitFor(`broker ${b.id} to be ready again`, deadline, pollMs, async () => {
        const now = await readiness(b);
        if (now.epoch === null) return now.why;
        // Still the registration from before the command: it has not restarted (yet).
        return before.epoch !== null && now.epoch === before.epoch ? "it has not restarted yet (same registration)" : null;
      });
      await say(`${step}: ready after ${secs()}; waiting for its replicas to rejoin the ISRs`);
      await waitFor("no under-replicated partitions after the restart", deadline, pollMs, () => replicationProblems(brokers));
      await say(`${step}: done in ${secs()}`);
    }
    await say(`Rolling restart done: ${brokers.length} broker(s) restarted, no under-replicated partitions`);
    return 0;
  } catch (e) {
    if (!(e instanceof RollError)) throw e;
    process.stderr.write(`strand cluster rolling-restart: ${e.message}\n`);
    return 1;
  }
}
