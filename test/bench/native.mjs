// The benches' native client: test/bench/native/rdkperf.c, built here against librdkafka
// (Debian: librdkafka-dev, and a C compiler) into the bench's temporary directory, never kept.
// kcat formats or parses every record and is the ceiling in several benches; rdkperf sends one
// payload and counts, so what it measures is the broker. Works under Node, Bun and Deno.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const source = fileURLToPath(new URL("./native/rdkperf.c", import.meta.url));

/** Compiles rdkperf into dir; returns its path, or throws saying what is missing. */
export function buildNative(dir) {
  const out = join(dir, "rdkperf");
  const cc = process.env.CC ?? "cc";
  const r = spawnSync(cc, ["-O2", "-o", out, source, "-lrdkafka"], { encoding: "utf8" });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(`building the native client (${cc} ... -lrdkafka) failed; it needs a C compiler and Debian's librdkafka-dev: ` +
      `${r.error?.message ?? r.stderr.slice(0, 1000)}`);
  }
  return out;
}

function nativeArgs(mode, opts) {
  const args = [mode, "-b", opts.bootstrap, "-t", opts.topic, "-n", String(opts.records), "-p", String(opts.partition ?? 0)];
  if (opts.size !== undefined) args.push("-s", String(opts.size));
  if (opts.rate !== undefined) args.push("-r", String(opts.rate));
  if (opts.spread !== undefined) args.push("-P", String(opts.spread));
  if (opts.group !== undefined) args.push("-g", opts.group);
  if (opts.idleMs !== undefined) args.push("-i", String(opts.idleMs));
  for (const [k, v] of Object.entries(opts.config ?? {})) args.push("-X", `${k}=${v}`);
  return args;
}

function nativeResult(args, status, stdout, stderr) {
  const line = (stdout ?? "").trim().split("\n").pop() ?? "";
  if (status !== 0 || !line.startsWith("{")) {
    throw new Error(`rdkperf ${args.join(" ")} exited ${status}: ${(stderr ?? "").slice(0, 2000)} ${line}`);
  }
  return JSON.parse(line);
}

/**
 * Runs `rdkperf produce|consume` and returns its JSON line (records, ms, records_per_s, first_ms,
 * last_ms; produce adds p50_ms ... max_ms of send-to-delivery-report latency). opts: { bootstrap,
 * topic, records, size, partition, rate, spread (partitions, round robin), group (consume as a
 * group member), idleMs, config: {key: value} }.
 */
export function runNative(bin, mode, opts) {
  const args = nativeArgs(mode, opts);
  const r = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 1 << 20, timeout: opts.timeoutMs ?? 600_000 });
  return nativeResult(args, r.status, r.stdout, r.stderr);
}

/** runNative without blocking, for several clients at once; resolves to the JSON line. */
export function startNative(bin, mode, opts) {
  const args = nativeArgs(mode, opts);
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], timeout: opts.timeoutMs ?? 600_000 });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => { stdout += d; });
  child.stderr.on("data", (d) => { if (stderr.length < 4000) stderr += d; });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => {
      try {
        resolve(nativeResult(args, status, stdout, stderr));
      } catch (e) {
        reject(e);
      }
    });
  });
}
