// Issue 15 acceptance: exactly-once consume-transform-produce across failures (ctp_kill_run.ts):
// three brokers, RF 3, min.insync.replicas=2; a confluent-kafka transactional copier copies COUNT
// numbered records from ctp-in to ctp-out, every ABORT_EVERY-th transaction aborted on purpose
// (its records flushed to the log first), while the input leader, the output leader and the
// transaction coordinator are SIGKILLed in turn; after each kill the copier must commit and abort
// while the victim is down, so aborts cross each failover. A read_committed reader of ctp-out must
// then see each input record exactly once, in order, and no aborted record; a read_uncommitted
// reader sees every acknowledged aborted record and every committed one; the group's committed
// offset is the input's end. COUNT is scaled to run in a minute or two here (2 cores shared by
// several agents); `npm run bench:eos` runs the 100,000.
import { test } from "node:test";
import assert from "node:assert/strict";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { skipUnless } from "../helpers/tools.ts";
import { ctpClusterOverrides, runCtpKill } from "./ctp_kill_run.ts";

const skip = skipUnlessZooKeeper() || skipUnless("confluent_kafka");
const COUNT = 20_000;
/** Records per transaction: 100 committed transactions, so every kill falls while the copier copies. */
const TXN_RECORDS = 200;
/** Every 4th transaction is aborted on purpose. */
const ABORT_EVERY = 4;

test(`cluster: consume-transform-produce of ${COUNT} records with confluent-kafka transactions, every ${ABORT_EVERY}th aborted on purpose; the input leader, the output leader and the transaction coordinator SIGKILLed in turn; read_committed sees each record exactly once, in order, and nothing aborted; read_uncommitted sees both`, { skip, timeout: 420_000 }, async () => {
  await withCluster(3, { budgetMs: 400_000, label: "strand-cluster-txn-", overrides: ctpClusterOverrides }, async (c) => {
    const { summary: s, lines, copierLog } = await runCtpKill(c, { count: COUNT, txnRecords: TXN_RECORDS, abortEvery: ABORT_EVERY, deadlineS: 240 });
    console.log(lines.join("\n"));
    console.log(JSON.stringify(s));
    // What the copier said besides its progress (rewinds tried again, aborts that failed): the
    // first place to look when a record is missing.
    if (copierLog.length > 0) console.log(`copier: ${copierLog.join(" | ")}`);
    assert.deepEqual([s.committed_read, s.duplicates, s.committed_exact, s.group_offset], [COUNT, 0, true, COUNT], JSON.stringify(s));
    assert.ok((s.uncommitted_read as number) >= COUNT);
    // The aborted transactions: none of their records read_committed, every acknowledged one read_uncommitted.
    assert.ok((s.deliberate_aborts as number) >= 3 && (s.aborted_delivered as number) > 0, JSON.stringify(s));
    assert.deepEqual([s.committed_aborted, s.uncommitted_aborted_missing, s.uncommitted_copies_missing], [0, 0, 0], JSON.stringify(s));
    assert.equal(s.ok, true, JSON.stringify(s));
  });
});
