// systemd/install.sh and uninstall.sh, run with --root into a temporary tree: the files each
// layout lays out for 1 and 3 disks, a second run changing nothing (the tree's hash is the same),
// uninstall removing what was installed (and --purge the data), and `systemd-analyze verify`
// finding nothing to say about the installed units.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/broker.ts";
import { run } from "../helpers/tools.ts";

const repo = new URL("../../", import.meta.url).pathname;
const install = join(repo, "systemd/install.sh");
const uninstall = join(repo, "systemd/uninstall.sh");

/** A root with fake /data1../dataN disks and a stand-in binary (a shell script: no build needed). */
function setup(disks: number): { dir: string; root: string; binary: string } {
  const dir = tempDir();
  const root = join(dir, "root");
  for (let i = 1; i <= disks; i++) mkdirSync(join(root, `data${i}`), { recursive: true });
  const binary = join(dir, "strand-stand-in");
  writeFileSync(binary, "#!/bin/sh\necho strand stand-in\n");
  chmodSync(binary, 0o755);
  return { dir, root, binary };
}

async function sh(script: string, args: string[]): Promise<string> {
  const r = await run("bash", [script, ...args], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, `${script} ${args.join(" ")} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r.stdout.toString();
}

/** Every path under root (relative, sorted; directories end in /). */
function listTree(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, rel)).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    if (lstatSync(join(root, p)).isDirectory()) out.push(`${p}/`, ...listTree(root, p));
    else out.push(p);
  }
  return out;
}

/** Paths, modes and contents of the whole tree. */
function hashTree(root: string): string {
  const h = createHash("sha256");
  for (const p of listTree(root)) {
    const st = lstatSync(join(root, p));
    h.update(`${p} ${st.mode.toString(8)} ${st.mtimeMs}\n`);
    if (!p.endsWith("/")) h.update(readFileSync(join(root, p)));
  }
  return h.digest("hex");
}

function props(file: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const t = line.trim();
    if (t === "" || t.startsWith("#")) continue;
    const i = t.indexOf("=");
    m.set(t.slice(0, i), t.slice(i + 1));
  }
  return m;
}

const files = (root: string) => listTree(root).filter((p) => !p.endsWith("/"));

test("install.sh --root: one service, 1 disk", async () => {
  const { dir, root, binary } = setup(1);
  try {
    const out = await sh(install, ["--root", root, "--binary", binary, "--broker-id", "7", "--zookeeper-connect", "zk1:2181,zk2:2181/strand"]);
    assert.match(out, /would run: useradd --system .*strand/);
    assert.match(out, /would run: systemctl enable strand\.service/);
    assert.deepEqual(files(root), [
      "etc/strand/server.properties",
      "etc/systemd/system/strand.service",
      "etc/systemd/system/strand.service.d/10-data-dirs.conf",
      "usr/local/bin/strand",
    ]);
    assert.ok(lstatSync(join(root, "data1/strand")).isDirectory());
    assert.equal(lstatSync(join(root, "data1/strand")).mode & 0o777, 0o750);
    assert.equal(lstatSync(join(root, "usr/local/bin/strand")).mode & 0o777, 0o755);
    assert.deepEqual(readFileSync(join(root, "usr/local/bin/strand")), readFileSync(binary));
    const c = props(join(root, "etc/strand/server.properties"));
    assert.equal(c.get("broker.id"), "7");
    assert.equal(c.get("log.dirs"), "/data1/strand");
    assert.equal(c.get("listeners"), "PLAINTEXT://0.0.0.0:9092");
    assert.equal(c.get("admin.listeners"), "http://127.0.0.1:9644");
    assert.equal(c.get("zookeeper.connect"), "zk1:2181,zk2:2181/strand");
    assert.deepEqual(readFileSync(join(root, "etc/systemd/system/strand.service")), readFileSync(join(repo, "systemd/strand.service")));
    assert.match(readFileSync(join(root, "etc/systemd/system/strand.service.d/10-data-dirs.conf"), "utf8"), /^ReadWritePaths=\/data1\/strand$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("install.sh --root: one service, 3 disks found under the root, log.dirs across them", async () => {
  const { dir, root, binary } = setup(3);
  try {
    await sh(install, ["--root", root, "--binary", binary, "--listeners", "PLAINTEXT://10.0.0.5:9092"]);
    assert.deepEqual(files(root), [
      "etc/strand/server.properties",
      "etc/systemd/system/strand.service",
      "etc/systemd/system/strand.service.d/10-data-dirs.conf",
      "usr/local/bin/strand",
    ]);
    for (const d of ["data1", "data2", "data3"]) assert.ok(existsSync(join(root, d, "strand")));
    const c = props(join(root, "etc/strand/server.properties"));
    assert.equal(c.get("broker.id"), "-1");
    assert.equal(c.get("log.dirs"), "/data1/strand,/data2/strand,/data3/strand");
    assert.equal(c.get("listeners"), "PLAINTEXT://10.0.0.5:9092");
    assert.equal(c.has("zookeeper.connect"), false);
    assert.match(readFileSync(join(root, "etc/systemd/system/strand.service.d/10-data-dirs.conf"), "utf8"),
      /^ReadWritePaths=\/data1\/strand \/data2\/strand \/data3\/strand$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("install.sh --root --per-disk: 1 disk, one instance", async () => {
  const { dir, root, binary } = setup(1);
  try {
    const out = await sh(install, ["--root", root, "--binary", binary, "--per-disk", "--disks", "/data1", "--broker-id", "100"]);
    assert.match(out, /would run: systemctl enable strand@1\.service$/m);
    assert.deepEqual(files(root), ["etc/strand/server-1.properties", "etc/systemd/system/strand@.service", "usr/local/bin/strand"]);
    const c = props(join(root, "etc/strand/server-1.properties"));
    assert.equal(c.get("broker.id"), "101");
    assert.equal(c.get("log.dirs"), "/data1/strand");
    assert.equal(c.get("listeners"), "PLAINTEXT://0.0.0.0:9093");
    assert.equal(c.get("admin.listeners"), "http://127.0.0.1:9645");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("install.sh --root --per-disk: 3 disks, one instance each with its own id, ports and log dir", async () => {
  const { dir, root, binary } = setup(3);
  mkdirSync(join(root, "mnt/ssd"), { recursive: true });
  try {
    const out = await sh(install, ["--root", root, "--binary", binary, "--per-disk", "--disks", "/data1 /data3 /mnt/ssd", "--broker-id", "10",
      "--listeners", "PLAINTEXT://host1:{port}"]);
    assert.match(out, /would run: systemctl enable strand@1\.service strand@3\.service strand@2\.service$/m);
    assert.deepEqual(files(root), [
      "etc/strand/server-1.properties",
      "etc/strand/server-2.properties",
      "etc/strand/server-3.properties",
      "etc/systemd/system/strand@.service",
      "etc/systemd/system/strand@2.service.d/10-data-dir.conf",
      "usr/local/bin/strand",
    ]);
    const want: Array<[number, string]> = [[1, "/data1"], [3, "/data3"], [2, "/mnt/ssd"]];
    for (const [n, disk] of want) {
      const c = props(join(root, `etc/strand/server-${n}.properties`));
      assert.equal(c.get("broker.id"), String(10 + n));
      assert.equal(c.get("log.dirs"), `${disk}/strand`);
      assert.equal(c.get("listeners"), `PLAINTEXT://host1:${9092 + n}`);
      assert.equal(c.get("admin.listeners"), `http://127.0.0.1:${9644 + n}`);
      assert.ok(existsSync(join(root, disk, "strand")));
    }
    assert.equal(existsSync(join(root, "data2/strand")), false);
    assert.match(readFileSync(join(root, "etc/systemd/system/strand@2.service.d/10-data-dir.conf"), "utf8"), /^ReadWritePaths=\/mnt\/ssd\/strand$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("install.sh twice changes nothing, in both layouts", async () => {
  for (const layout of [[], ["--per-disk"]]) {
    const { dir, root, binary } = setup(3);
    try {
      const args = ["--root", root, "--binary", binary, "--broker-id", "3", ...layout];
      await sh(install, args);
      const first = hashTree(root);
      const again = await sh(install, args);
      assert.equal(hashTree(root), first, `second run changed the tree (${layout.join(" ") || "single"})`);
      assert.doesNotMatch(again, /wrote /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test("install.sh refuses a missing disk, a bad broker id and a root without disks", async () => {
  const { dir, root, binary } = setup(0);
  try {
    mkdirSync(root, { recursive: true });
    const none = await run("bash", [install, "--root", root, "--binary", binary]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no \/data\* disks found/);
    const missing = await run("bash", [install, "--root", root, "--binary", binary, "--disks", "/data9"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /disk \/data9: no such directory/);
    const badId = await run("bash", [install, "--root", root, "--binary", binary, "--broker-id", "x"]);
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--broker-id/);
    assert.deepEqual(files(root), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("uninstall.sh --root removes units and binary, keeps config and data; --purge removes them", async () => {
  for (const layout of [[], ["--per-disk"]]) {
    const { dir, root, binary } = setup(3);
    try {
      await sh(install, ["--root", root, "--binary", binary, ...layout]);
      writeFileSync(join(root, "data2/strand/00000000000000000000.log"), "records");
      const out = await sh(uninstall, ["--root", root]);
      assert.match(out, /would run: systemctl disable --now strand/);
      const kept = files(root);
      assert.ok(kept.every((p) => p.startsWith("etc/strand/") || p.startsWith("data")), kept.join(" "));
      assert.ok(kept.includes("data2/strand/00000000000000000000.log"));
      assert.ok(kept.some((p) => p.startsWith("etc/strand/server")));
      await sh(uninstall, ["--root", root, "--purge"]);
      assert.deepEqual(files(root), []);
      for (const d of ["data1", "data2", "data3"]) {
        assert.ok(existsSync(join(root, d)), `the disk's mount point ${d} stays`);
        assert.equal(existsSync(join(root, d, "strand")), false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

const hasAnalyze = spawnSync("systemd-analyze", ["--version"], { stdio: "ignore" }).status === 0;
const analyzeSkip = hasAnalyze ? false : "needs systemd-analyze (Debian package systemd)";
if (!hasAnalyze && process.env.CI === "true") throw new Error("CI=true and systemd-analyze is missing: .ci/run must install systemd");

test("systemd-analyze verify: every installed unit, both layouts, says nothing", { skip: analyzeSkip }, async () => {
  for (const layout of [["--disks", "/data1 /data2 /data3"], ["--per-disk", "--disks", "/data1 /data2 /mnt/ssd"]]) {
    const { dir, root, binary } = setup(3);
    mkdirSync(join(root, "mnt/ssd"), { recursive: true });
    try {
      await sh(install, ["--root", root, "--binary", binary, ...layout]);
      // verify --root loads the units the targets pull in from the root: lend it the host's.
      mkdirSync(join(root, "usr/lib/systemd"), { recursive: true });
      symlinkSync("/lib/systemd/system", join(root, "usr/lib/systemd/system"));
      const units = layout.includes("--per-disk") ? ["strand@1.service", "strand@2.service", "strand@3.service"] : ["strand.service"];
      for (const unit of units) {
        const r = await run("systemd-analyze", ["verify", `--root=${root}`, "--man=no", unit], { timeoutMs: 60_000 });
        assert.equal(`${r.stdout}${r.stderr}`, "", `systemd-analyze verify ${unit} said something`);
        assert.equal(r.code, 0);
        const s = await run("systemd-analyze", ["security", "--offline=true", `--root=${root}`, unit], { timeoutMs: 60_000 });
        const score = `${s.stdout}`.match(/Overall exposure level for \S+: ([\d.]+ \w+)/);
        assert.ok(score, `no score from systemd-analyze security:\n${s.stdout}${s.stderr}`);
        console.log(`systemd-analyze security ${unit}: ${score[1]}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

// ---- the ZooKeeper ensemble member (--zookeeper-ensemble, --zookeeper-id) ---------------------

const ensembleArgs = (root: string, binary: string, id: number) =>
  ["--root", root, "--binary", binary, "--broker-id", String(id), "--zookeeper-ensemble", "zk-a.example,zk-b.example,10.1.2.3", "--zookeeper-id", String(id)];

test("install.sh --zookeeper-ensemble: zoo.cfg, myid on the first disk, the unit, and zookeeper.connect with all three hosts", async () => {
  for (const layout of [[], ["--per-disk"]]) {
    const { dir, root, binary } = setup(2);
    try {
      const out = await sh(install, [...ensembleArgs(root, binary, 2), ...layout]);
      assert.match(out, /would run: chown -R zookeeper:zookeeper \S*\/data1\/zookeeper$/m);
      assert.match(out, /would run: systemctl enable strand-zookeeper\.service strand/);
      const all = files(root);
      for (const f of ["etc/strand/zookeeper/zoo.cfg", "data1/zookeeper/myid", "etc/systemd/system/strand-zookeeper.service",
        "etc/systemd/system/strand-zookeeper.service.d/10-data-dir.conf"]) assert.ok(all.includes(f), `${f} in ${all.join(" ")}`);
      assert.equal(readFileSync(join(root, "data1/zookeeper/myid"), "utf8"), "2\n");
      assert.equal(lstatSync(join(root, "data1/zookeeper")).mode & 0o777, 0o750);
      const z = props(join(root, "etc/strand/zookeeper/zoo.cfg"));
      assert.equal(z.get("tickTime"), "2000");
      assert.equal(z.get("initLimit"), "10");
      assert.equal(z.get("syncLimit"), "5");
      assert.equal(z.get("dataDir"), "/data1/zookeeper");
      assert.equal(z.get("clientPort"), "2181");
      assert.equal(z.get("server.1"), "zk-a.example:2888:3888");
      assert.equal(z.get("server.2"), "zk-b.example:2888:3888");
      assert.equal(z.get("server.3"), "10.1.2.3:2888:3888");
      assert.equal(z.has("server.4"), false);
      assert.deepEqual(readFileSync(join(root, "etc/systemd/system/strand-zookeeper.service")), readFileSync(join(repo, "systemd/strand-zookeeper.service")));
      assert.match(readFileSync(join(root, "etc/systemd/system/strand-zookeeper.service.d/10-data-dir.conf"), "utf8"), /^ReadWritePaths=\/data1\/zookeeper$/m);
      const configs = all.filter((p) => /^etc\/strand\/server.*\.properties$/.test(p));
      assert.equal(configs.length, layout.length === 0 ? 1 : 2);
      for (const c of configs) assert.equal(props(join(root, c)).get("zookeeper.connect"), "zk-a.example:2181,zk-b.example:2181,10.1.2.3:2181/strand");
      // Again: nothing changes.
      const first = hashTree(root);
      const again = await sh(install, [...ensembleArgs(root, binary, 2), ...layout]);
      assert.equal(hashTree(root), first);
      assert.doesNotMatch(again, /wrote /);
      // Uninstall keeps the ZooKeeper data; --purge removes it.
      await sh(uninstall, ["--root", root]);
      assert.ok(existsSync(join(root, "data1/zookeeper/myid")));
      assert.equal(existsSync(join(root, "etc/systemd/system/strand-zookeeper.service")), false);
      await sh(uninstall, ["--root", root, "--purge"]);
      assert.deepEqual(files(root), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test("install.sh --zookeeper-ensemble: client port and chroot flags; bad ids and hosts refused, nothing written", async () => {
  const { dir, root, binary } = setup(1);
  try {
    await sh(install, ["--root", root, "--binary", binary, "--zookeeper-ensemble", "a,b,c", "--zookeeper-id", "3", "--zookeeper-client-port", "2999", "--zookeeper-chroot", "/kafka/prod"]);
    assert.equal(props(join(root, "etc/strand/server.properties")).get("zookeeper.connect"), "a:2999,b:2999,c:2999/kafka/prod");
    assert.equal(props(join(root, "etc/strand/zookeeper/zoo.cfg")).get("clientPort"), "2999");
    assert.equal(readFileSync(join(root, "data1/zookeeper/myid"), "utf8"), "3\n");
    const empty = join(dir, "empty");
    mkdirSync(join(empty, "data1"), { recursive: true });
    const bad: Array<[string[], RegExp]> = [
      [["--zookeeper-ensemble", "a,b,c", "--zookeeper-id", "4"], /--zookeeper-id must be/],
      [["--zookeeper-ensemble", "a,b,c", "--zookeeper-id", "0"], /--zookeeper-id must be/],
      [["--zookeeper-ensemble", "a,b,c"], /--zookeeper-id must be/],
      [["--zookeeper-id", "1"], /--zookeeper-id needs --zookeeper-ensemble/],
      [["--zookeeper-ensemble", "a,b c,d", "--zookeeper-id", "1"], /not a host name/],
      [["--zookeeper-ensemble", "a,b,c", "--zookeeper-id", "1", "--zookeeper-connect", "x:2181"], /give one/],
      [["--zookeeper-ensemble", "a,b,c", "--zookeeper-id", "1", "--zookeeper-chroot", "strand"], /--zookeeper-chroot/],
    ];
    for (const [args, why] of bad) {
      const r = await run("bash", [install, "--root", empty, "--binary", binary, ...args]);
      assert.equal(r.code, 2, args.join(" "));
      assert.match(r.stderr, why, args.join(" "));
    }
    assert.deepEqual(files(empty), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("systemd-analyze verify: strand-zookeeper.service says nothing", { skip: analyzeSkip }, async () => {
  const { dir, root, binary } = setup(1);
  try {
    await sh(install, ensembleArgs(root, binary, 1));
    mkdirSync(join(root, "usr/lib/systemd"), { recursive: true });
    symlinkSync("/lib/systemd/system", join(root, "usr/lib/systemd/system"));
    // verify looks for ExecStart's /usr/bin/java under the root: a stand-in, as for strand.
    mkdirSync(join(root, "usr/bin"), { recursive: true });
    writeFileSync(join(root, "usr/bin/java"), "#!/bin/sh\n");
    chmodSync(join(root, "usr/bin/java"), 0o755);
    for (const unit of ["strand-zookeeper.service", "strand.service"]) {
      const r = await run("systemd-analyze", ["verify", `--root=${root}`, "--man=no", unit], { timeoutMs: 60_000 });
      assert.equal(`${r.stdout}${r.stderr}`, "", `systemd-analyze verify ${unit} said something`);
      assert.equal(r.code, 0);
    }
    const s = await run("systemd-analyze", ["security", "--offline=true", `--root=${root}`, "strand-zookeeper.service"], { timeoutMs: 60_000 });
    const score = `${s.stdout}`.match(/Overall exposure level for \S+: ([\d.]+ \w+)/);
    assert.ok(score, `no score from systemd-analyze security:\n${s.stdout}${s.stderr}`);
    console.log(`systemd-analyze security strand-zookeeper.service: ${score[1]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
