#!/usr/bin/env node
// npm run bench:eos [-- --records N --txn-records R --abort-every K --runtime bun|deno|both]
//
// Issue 15's exactly-once acceptance at its full size: consume-transform-produce of N numbered
// records (default 100,000) with confluent-kafka transactions (send_offsets_to_transaction) on
// three brokers (RF 3, min.insync.replicas=2, a real ZooKeeper), every K-th transaction aborted on
// purpose, while the input leader, the output leader and the transaction coordinator are SIGKILLed
// in turn (test/cluster/ctp_kill_run.ts, the scenario of test/cluster/txn_ctp_kill.test.ts, which
// runs it at 20,000). Runs eos_bench.ts under Bun and/or Deno and prints, per runtime: the time to
// copy, records/s through the kills, the transactions, and what a read_committed reader (each
// record exactly once, in order, nothing aborted) and a read_uncommitted reader (the aborted
// records too) saw. Exits non-zero when exactly-once did not hold. Needs python3-confluent-kafka
// and zookeeper (Debian packages).
import { runTsBench } from "./runtimes.mjs";

const results = await runTsBench("eos_bench.ts");
const col = (s) => String(s).padStart(14);
const fmt = (n) => Math.round(n).toLocaleString("en-US");
const first = results[0];
console.log(`\nsummary (${first.records.toLocaleString("en-US")} records, ${first.txnRecords} per transaction, every ${first.abortEvery}th aborted; three SIGKILLs):`);
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
