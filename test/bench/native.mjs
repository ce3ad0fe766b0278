// The benches' native client: test/bench/native/rdkperf.c, built here against librdkafka
// (Debian: librdkafka-dev, and a C compiler) into the bench's temporary directory, never kept.
// kcat formats or parses every record and is the ceiling in several benches; rdkperf sends one
// payload and counts, so what it measures is the broker. Works under Node, Bun and Deno.
import { spawnSync } from "node:child_process";
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

/**
 * Runs `rdkperf produce|consume` and returns its JSON line (records, ms, records_per_s; produce
 * adds p50_ms ... max_ms of send-to-delivery-report latency). opts: { bootstrap, topic, records,
 * size, partition, rate, config: {key: value} }.
 */
export function runNative(bin, mode, opts) {
  const args = [mode, "-b", opts.bootstrap, "-t", opts.topic, "-n", String(opts.records), "-p", String(opts.partition ?? 0)];
  if (opts.size !== undefined) args.push("-s", String(opts.size));
  if (opts.rate !== undefined) args.push("-r", String(opts.rate));
  for (const [k, v] of Object.entries(opts.config ?? {})) args.push("-X", `${k}=${v}`);
  const r = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 1 << 20, timeout: opts.timeoutMs ?? 600_000 });
  const line = (r.stdout ?? "").trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) {
    throw new Error(`rdkperf ${args.join(" ")} exited ${r.status}: ${(r.stderr ?? "").slice(0, 2000)} ${line}`);
  }
  return JSON.parse(line);
}
