// The dashboard shows the whole cluster from any broker: three brokers in this process on one
// ZooKeeper (test/helpers/admin_cluster.ts), broker 0's page in headless Chromium (Debian
// `chromium`, driven by playwright-core). It lists the three brokers with their own message rates
// (broker 2 gets live traffic on "clicks", read from broker 2's admin API by broker 0), the partitions of
// "orders" with leaders 0, 1 and 2, and a consumer group coordinated by another broker with its
// lag per partition (4 + 3 + 2, the high watermarks read from each partition's leader). Then
// broker 2's published admin address is pointed at a server that never answers: the page still
// refreshes, and says which broker does not answer. Screenshot: test-artifacts/dashboard-cluster.png.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { test } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { CreateTopicsApi } from "../../src/protocol/mod.ts";
import { AdminEndpointZNode } from "../../src/registry/mod.ts";
import { threeBrokerCluster } from "../helpers/admin_cluster.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { skipUnless } from "../helpers/tools.ts";
import { produce, WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper, sleep, startFakeServer } from "../helpers/zookeeper.ts";

const zk = sharedZooKeeper();
const ARTIFACTS = new URL("../../test-artifacts/", import.meta.url).pathname;
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"];

test("dashboard: broker 0's page shows every broker with its rate, every partition's leader and ISR, and another coordinator's group with its lag", { skip: skipUnlessZooKeeper() || skipUnless("chromium"), timeout: 180_000 }, async () => {
  const { brokers, zkc, group, coordinator, close } = await threeBrokerCluster(zk, "strand-cluster-dashboard");
  let producing = true;
  let traffic: Promise<void> = Promise.resolve();
  let browser: Browser | null = null;
  const hung = await startFakeServer(() => {/* accepts, never answers */});
  try {
    // Live traffic on "clicks", led by broker 2, so the group's figures on "orders" stay put.
    const c = await WireClient.connect(brokers[0].port);
    const created = await c.request(CreateTopicsApi, 7, {
      topics: [{ name: "clicks", numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [2] }], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    c.close();
    assert.equal((created.topics as { errorCode: number }[])[0].errorCode, 0);
    traffic = (async () => {
      const w = await WireClient.connect(brokers[2].port);
      try {
        while (producing) {
          const r = await produce(w, "clicks", 0, buildBatch(valueRecords(20, "t", 50)));
          if (r.errorCode !== 0) await sleep(100); // until broker 2 has the partition
          await sleep(150);
        }
      } finally {
        w.close();
      }
    })();
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    });
    await page.goto(`${brokers[0].adminUrl}/`);
    const rows = (table: string) =>
      page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => (td.textContent ?? "").trim())));

    // Broker 2's rate, measured by broker 2 and shown by broker 0's page.
    await page.waitForFunction(() => {
      const cells = document.querySelectorAll('#brokers tbody tr[data-broker="2"] td');
      return cells.length >= 5 && Number((cells[4].textContent ?? "").replace(/[^\d.]/g, "")) > 0;
    }, undefined, { timeout: 30_000, polling: 250 });
    const brokerRows = await rows("brokers");
    assert.deepEqual(brokerRows.map((r) => r.slice(0, 2)), brokers.map((b, id) => [String(id), `127.0.0.1:${b.port}`]));
    assert.equal(await page.textContent("#local-id"), "0");

    // The group another broker coordinates, with the lag of partitions it does not lead.
    await page.waitForFunction((g) => document.querySelector(`#groups tbody tr[data-group="${g}"]`) !== null, group, { timeout: 30_000, polling: 250 });
    assert.deepEqual((await rows("groups")).filter((r) => r[0] === group), [[group, "Empty", "0", "3", "9", String(coordinator)]]);
    assert.deepEqual((await rows("offsets")).filter((r) => r[0] === group).map((r) => [r[2], r[3], r[5]]), [["0", "1", "4"], ["1", "2", "3"], ["2", "3", "2"]]);
    assert.equal(await page.textContent("#groups-scope"), "across every coordinator");

    // Every partition of orders with its leader and ISR (from broker 0's metadata).
    const parts = (await rows("partitions")).filter((r) => r[0] === "orders").map((r) => [r[1], r[2], r[3], r[4]]);
    assert.deepEqual(parts, [["0", "0", "0", "0"], ["1", "1", "1", "1"], ["2", "2", "2", "2"]]);
    assert.equal(await page.isHidden("#peers"), true, "every broker answers");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}dashboard-cluster.png`, fullPage: true });

    // Broker 2's admin API stops answering: the page goes on and names it.
    await zkc.setData(AdminEndpointZNode.path(2), AdminEndpointZNode.encode([`http://127.0.0.1:${hung.port}`]), -1);
    await page.waitForFunction(() => /Broker 2's admin API does not answer/.test(document.getElementById("peers")?.textContent ?? ""), undefined, { timeout: 30_000, polling: 250 });
    assert.match((await page.textContent("#status")) ?? "", /^live · updated/);
    assert.equal(await page.isHidden("#error"), true, "the poll itself succeeded");
    assert.deepEqual(problems, []);
  } finally {
    producing = false;
    await traffic.catch(() => {});
    await browser?.close();
    await hung.close();
    await close();
    await zk.stop();
  }
});
