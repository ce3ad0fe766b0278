// `strand consume --group` and `strand groups` as a user runs them: a group member commits what it
// printed; describe shows committed offsets, log end offsets and lag (and, while members are
// active, who owns which partition, split by the range assignor); reset-offsets shows a plan
// without --execute and commits it with; a group with members refuses the reset; delete.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { lines, strand, strandCommand, strandOk } from "./strand.ts";

/** The rows of describe's partition table, as [topic, partition, current, logEnd, lag, consumerId]. */
function partitionRows(describe: string): string[][] {
  const at = describe.indexOf("GROUP ");
  return describe.slice(at).trimEnd().split("\n").slice(1).map((l) => l.trim().split(/\s+/).slice(1, 7));
}

test("cli groups: a member commits what it printed; describe shows lag; reset-offsets dry run, execute; delete", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "events", "--partitions", "2"]);
    await strandOk(["produce", ...bs, "--topic", "events", "--partition", "0"], { input: lines(30, "a") });
    await strandOk(["produce", ...bs, "--topic", "events", "--partition", "1"], { input: lines(20, "b") });

    // 25 of 50 records: with one member both partitions are its; what it printed is committed.
    const first = await strandOk(["consume", ...bs, "--topic", "events", "--group", "g1", "--from-beginning", "--max-messages", "25"]);
    assert.equal(first.trimEnd().split("\n").length, 25);
    assert.equal(await strandOk(["groups", "list", ...bs]), "g1\n");
    assert.match(await strandOk(["groups", "list", ...bs, "--state"]), /^GROUP\s+STATE\ng1\s+Empty\n$/);

    const d = await strandOk(["groups", "describe", ...bs, "--group", "g1"]);
    assert.match(d, /^Group: g1 {2}State: Empty {2}Protocol: consumer\/\S* {2}Members: 0\nConsumer group 'g1' has no active members\.\n/);
    const rows = partitionRows(d);
    const committed = rows.reduce((n, r) => n + Number(r[2]), 0);
    assert.equal(committed, 25, `committed offsets sum to what was printed: ${d}`);
    assert.deepEqual(rows.map((r) => [r[0], r[1], r[3]]), [["events", "0", "30"], ["events", "1", "20"]]);
    for (const r of rows) assert.equal(Number(r[4]), Number(r[3]) - Number(r[2]), "lag = log end - committed");

    // The rest, from the committed offsets: nothing printed twice, nothing skipped.
    const rest = await strandOk(["consume", ...bs, "--topic", "events", "--group", "g1", "--timeout-ms", "2000"]);
    const seen = [...first.trimEnd().split("\n"), ...rest.trimEnd().split("\n")].sort();
    assert.deepEqual(seen, [...lines(30, "a").trimEnd().split("\n"), ...lines(20, "b").trimEnd().split("\n")].sort());
    assert.deepEqual(partitionRows(await strandOk(["groups", "describe", ...bs, "--group", "g1"])).map((r) => r[4]), ["0", "0"]);

    // Dry run: the plan, nothing committed.
    const dry = await strand(["groups", "reset-offsets", ...bs, "--group", "g1", "--topic", "events", "--to-earliest"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^GROUP\s+TOPIC\s+PARTITION\s+NEW-OFFSET\ng1\s+events\s+0\s+0\ng1\s+events\s+1\s+0\n$/);
    assert.match(dry.stderr, /Dry run/);
    assert.deepEqual(partitionRows(await strandOk(["groups", "describe", ...bs, "--group", "g1"])).map((r) => r[2]), ["30", "20"]);
    // --execute commits; --to-offset is kept within the log; one partition by topic:partition.
    await strandOk(["groups", "reset-offsets", ...bs, "--group", "g1", "--topic", "events", "--to-offset", "25", "--execute"]);
    assert.deepEqual(partitionRows(await strandOk(["groups", "describe", ...bs, "--group", "g1"])).map((r) => [r[2], r[4]]), [["25", "5"], ["20", "0"]]);
    await strandOk(["groups", "reset-offsets", ...bs, "--group", "g1", "--topic", "events:1", "--to-earliest", "--execute"]);
    await strandOk(["groups", "reset-offsets", ...bs, "--group", "g1", "--all-topics", "--to-latest", "--execute"]);
    assert.deepEqual(partitionRows(await strandOk(["groups", "describe", ...bs, "--group", "g1"])).map((r) => r[2]), ["30", "20"]);
    await strandOk(["groups", "reset-offsets", ...bs, "--group", "g1", "--topic", "events:1", "--to-offset", "15", "--execute"]);
    assert.equal(await strandOk(["consume", ...bs, "--topic", "events", "--group", "g1", "--timeout-ms", "2000"]), lines(20, "b").split("\n").slice(15).join("\n"));

    assert.equal(await strandOk(["groups", "delete", ...bs, "--group", "g1"]), "Deletion of requested consumer groups ('g1') was successful.\n");
    assert.equal(await strandOk(["groups", "list", ...bs]), "");
    const gone = await strand(["groups", "describe", ...bs, "--group", "g1"]);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr, 'strand groups: group "g1" does not exist\n');
  } finally {
    await b.stop();
  }
});

test("cli groups: two members split partitions by range; describe shows owners; reset and delete are refused while active", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  const children: ReturnType<typeof spawn>[] = [];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "shared", "--partitions", "4"]);
    for (let p = 0; p < 4; p++) await strandOk(["produce", ...bs, "--topic", "shared", "--partition", String(p)], { input: lines(10, `p${p}-`) });
    // Two long-running members (they stop on SIGTERM, committing and leaving the group).
    const outputs = ["", ""];
    const exits: Promise<number | null>[] = [];
    for (let i = 0; i < 2; i++) {
      const child = spawn(strandCommand[0], [...strandCommand[1], "consume", ...bs, "--topic", "shared", "--group", "pair", "--from-beginning"], { stdio: ["ignore", "pipe", "pipe"] });
      child.stdout!.on("data", (d) => (outputs[i] += d));
      children.push(child);
      exits.push(new Promise((res) => child.on("exit", (code) => res(code))));
    }
    // Wait until the group is stable with both members, each owning two partitions.
    let d = "";
    const deadline = Date.now() + 45_000;
    for (;;) {
      // Until the first member has joined, the group does not exist yet (exit 1): ask again.
      const r = await strand(["groups", "describe", ...bs, "--group", "pair"]);
      if (r.code !== 0 && !/does not exist/.test(r.stderr)) throw new Error(`groups describe exited ${r.code}: ${r.stderr}`);
      d = r.stdout;
      const rows = partitionRows(d);
      const owners = new Set(rows.map((r) => r[5]).filter((o) => o !== "-"));
      if (/State: Stable/.test(d) && /Members: 2/.test(d) && owners.size === 2 && rows.length === 4 && rows.every((r) => r[4] === "0")) break;
      if (Date.now() > deadline) throw new Error(`group did not settle: ${d}\n${outputs.join("\n---\n")}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    // Range: partitions 0-1 to the member whose id sorts first, 2-3 to the other.
    const rows = partitionRows(d);
    assert.equal(rows[0][5], rows[1][5]);
    assert.equal(rows[2][5], rows[3][5]);
    assert.ok(rows[0][5] < rows[2][5], "the member id that sorts first has the first range");
    assert.match(d, /MEMBER-ID\s+HOST\s+CLIENT-ID\s+#PARTITIONS\s+ASSIGNMENT/);
    assert.match(d, /strand-cli\s+2\s+shared\(0,1\)/);
    assert.match(d, /strand-cli\s+2\s+shared\(2,3\)/);

    const reset = await strand(["groups", "reset-offsets", ...bs, "--group", "pair", "--all-topics", "--to-earliest", "--execute"]);
    assert.equal(reset.code, 1);
    assert.match(reset.stderr, /^strand groups: assignments can only be reset if the group 'pair' is inactive, but the current state is Stable\n$/);
    const del = await strand(["groups", "delete", ...bs, "--group", "pair"]);
    assert.equal(del.code, 1);
    assert.match(del.stderr, /^strand groups: group "pair" is not empty/);

    // A plain kill(2): Deno's ChildProcess.kill() reports a handled signal as the exit cause.
    for (const c of children) process.kill(c.pid!, "SIGTERM");
    assert.deepEqual(await Promise.all(exits), [0, 0]);
    // Together they printed every record once.
    const all = outputs.join("").trimEnd().split("\n").sort();
    assert.deepEqual(all, [0, 1, 2, 3].flatMap((p) => lines(10, `p${p}-`).trimEnd().split("\n")).sort());
    assert.match(await strandOk(["groups", "describe", ...bs, "--group", "pair"]), /State: Empty/);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    await b.stop();
  }
});
