// The runtime side of `npm run bench:eos` (test/bench/eos.mjs runs it under Bun and/or Deno, the
// brokers under the same runtime): issue 15's exactly-once acceptance at its full size, the
// scenario of test/cluster/txn_ctp_kill.test.ts (test/cluster/ctp_kill_run.ts) with --records
// (default 100,000) on three brokers and a real ZooKeeper. Prints the figures and one RESULT line.
import process from "node:process";
import { parseArgs } from "node:util";
import { currentRuntime, withCluster } from "../helpers/cluster.ts";
import { ctpClusterOverrides, runCtpKill } from "../cluster/ctp_kill_run.ts";

const { values } = parseArgs({
  options: { records: { type: "string", default: "100000" }, "txn-records": { type: "string", default: "200" }, "abort-every": { type: "string", default: "4" } },
});
const records = Number(values.records);
const txnRecords = Number(values["txn-records"]);
const abortEvery = Number(values["abort-every"]);
// The copier's deadline grows with the records: about 300 records/s under load, and the kills.
const deadlineS = Math.max(240, Math.ceil(records / 300) + 120);
console.log(`strand exactly-once bench on ${currentRuntime}: ${records.toLocaleString("en-US")} records, ${txnRecords} per transaction, every ${abortEvery}th aborted on purpose`);
const run = await withCluster(3, { budgetMs: (deadlineS + 300) * 1000, label: "strand-bench-eos-", logLevel: "warn", overrides: ctpClusterOverrides }, (c) =>
  runCtpKill(c, { count: records, txnRecords, abortEvery, deadlineS }));
for (const line of run.lines) console.log(`  ${line}`);
const s = run.summary;
console.log(
  `  input written in ${(run.inputMs / 1000).toFixed(1)} s; copied in ${(run.copyMs / 1000).toFixed(1)} s (${Math.round(records / (run.copyMs / 1000))} records/s, ` +
    `${s.commits} commits, ${s.deliberate_aborts} aborts on purpose, ${s.aborts} after errors, ${s.fatal_restarts} new producers)`,
);
console.log(
  `  read_committed: ${s.committed_read} records, ${s.duplicates} duplicates, exact and in order: ${s.committed_exact}, aborted records: ${s.committed_aborted}; ` +
    `read_uncommitted: ${s.uncommitted_read} records, acknowledged aborted ones missing: ${s.uncommitted_aborted_missing}`,
);
console.log("RESULT " + JSON.stringify({ runtime: currentRuntime, records, txnRecords, abortEvery, copyMs: run.copyMs, inputMs: run.inputMs, summary: s, lines: run.lines }));
// Whatever a client library left open does not keep the bench waiting.
process.exit(0);
