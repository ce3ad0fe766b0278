#!/usr/bin/env node
// npm run bench:eos [-- --records N --txn-records R --abort-every K --runtime bun|deno|both]
//
// Issue 15's exactly-once acceptance at its full size: consume-transform-produce of N numbered
// records (default 100,000) with confluent-kafka transactions (send_offsets_to_transaction) on
// three brokers (RF 3, min.insync.replicas=2, a real ZooKeeper), every K-th transaction aborted on
// purpose, while the input leader, the output leader and the transaction coordinator are SIGKILLed
// in turn (test/cluster/ctp_kill_run.ts, the scenario of test/cluster/txn_ctp_kill.test.ts, which
// runs it at 20,000). Prints, per runtime: the time to copy, records/s and transactions/s through
// the kills, each kill's failover figures, and what a read_committed reader (each record exactly
// once, in order, nothing aborted) and a read_uncommitted reader (the aborted records too) saw.
// Exits non-zero when exactly-once did not hold.
//
// Run by node, this file starts itself again under Bun and/or Deno (the brokers run under the
// same runtime), since it uses the TypeScript harness.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const g = globalThis;
const underNode = g.Bun === undefined && g.Deno === undefined;
const root = fileURLToPath(new URL("../../", import.meta.url));
const self = fileURLToPath(import.meta.url);

function arg(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}

if (underNode) {
  const args = process.argv.slice(2);
  const which = arg(args, "runtime", "both");
  const runtimes = which === "both" ? ["bun", "deno"] : [which];
  if (spawnSync("/usr/bin/python3", ["-c", "import confluent_kafka"]).status !== 0) {
    console.error("bench:eos needs python3-confluent-kafka (Debian package)");
    process.exit(1);
  }
  const results = [];
  for (const rt of runtimes) {
    const bin = `${root}node_modules/.bin/${rt}`;
    const argv = rt === "bun" ? [self, ...args] : ["run", "-A", "--no-check", self, ...args];
    const result = await new Promise((resolve, reject) => {
      const child = spawn(bin, argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
      let buffered = "";
      let r = null;
      child.stdout.on("data", (d) => {
        buffered += d.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop();
        for (const line of lines) {
          if (line.startsWith("RESULT ")) r = JSON.parse(line.slice(7));
          else console.log(line);
        }
      });
      child.on("error", reject);
      child.on("close", (code) => (r !== null ? resolve(r) : reject(new Error(`${rt} bench exited ${code}`))));
    });
    results.push(result);
  }
  const col = (s) => String(s).padStart(14);
  const fmt = (n) => Math.round(n).toLocaleString("en-US");
  console.log(`\nsummary (${results[0].records.toLocaleString("en-US")} records, ${results[0].txnRecords} per transaction, every ${results[0].abortEvery}th aborted; three SIGKILLs):`);
  console.log("".padEnd(46) + results.map((r) => col(r.runtime)).join(""));
  const row = (label, f) => console.log(label.padEnd(46) + results.map((r) => col(f(r))).join(""));
  row("copy time through the kills (s)", (r) => (r.copyMs / 1000).toFixed(1));
  row("records/s copied", (r) => fmt(r.records / (r.copyMs / 1000)));
  row("transactions committed / aborted on purpose", (r) => `${r.summary.commits}/${r.summary.deliberate_aborts}`);
  row("aborts after errors / new producers", (r) => `${r.summary.aborts}/${r.summary.fatal_restarts}`);
  row("read_committed records (duplicates)", (r) => `${r.summary.committed_read} (${r.summary.duplicates})`);
  row("read_committed exact, in order", (r) => String(r.summary.committed_exact));
  row("read_committed aborted records", (r) => r.summary.committed_aborted);
  row("read_uncommitted records", (r) => r.summary.uncommitted_read);
  row("acknowledged aborted records missing there", (r) => r.summary.uncommitted_aborted_missing);
  row("exactly once", (r) => String(r.summary.ok === true));
  process.exit(results.every((r) => r.summary.ok === true) ? 0 : 1);
}

// ---- under Bun or Deno ----------------------------------------------------------------------------
const { withCluster, currentRuntime } = await import("../helpers/cluster.ts");
const { ctpClusterOverrides, runCtpKill } = await import("../cluster/ctp_kill_run.ts");

const args = process.argv.slice(2);
const records = Number(arg(args, "records", "100000"));
const txnRecords = Number(arg(args, "txn-records", "200"));
const abortEvery = Number(arg(args, "abort-every", "4"));
// The copier's deadline grows with the records: about 300 records/s under load, and the kills.
const deadlineS = Math.max(240, Math.ceil(records / 300) + 120);
console.log(`strand exactly-once bench on ${currentRuntime}: ${records.toLocaleString("en-US")} records, ${txnRecords} per transaction, every ${abortEvery}th aborted on purpose`);
const run = await withCluster(3, { budgetMs: (deadlineS + 300) * 1000, label: "strand-bench-eos-", logLevel: "warn", overrides: ctpClusterOverrides }, (c) =>
  runCtpKill(c, { count: records, txnRecords, abortEvery, deadlineS }));
for (const line of run.lines) console.log(`  ${line}`);
const s = run.summary;
console.log(`  input written in ${(run.inputMs / 1000).toFixed(1)} s; copied in ${(run.copyMs / 1000).toFixed(1)} s (${Math.round(records / (run.copyMs / 1000))} records/s, ${s.commits} commits, ${s.deliberate_aborts} aborts on purpose, ${s.aborts} after errors, ${s.fatal_restarts} new producers)`);
console.log(`  read_committed: ${s.committed_read} records, ${s.duplicates} duplicates, exact and in order: ${s.committed_exact}, aborted records: ${s.committed_aborted}; read_uncommitted: ${s.uncommitted_read} records, acknowledged aborted ones missing: ${s.uncommitted_aborted_missing}`);
console.log("RESULT " + JSON.stringify({ runtime: currentRuntime, records, txnRecords, abortEvery, copyMs: run.copyMs, inputMs: run.inputMs, summary: s, lines: run.lines }));
