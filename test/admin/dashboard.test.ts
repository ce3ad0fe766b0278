// The dashboard at / on the admin listener. First over plain HTTP: the page, its stylesheet and
// script come from the process (no files), with a strict Content-Security-Policy and no URL
// outside the admin listener; /v1/stats counts what is produced. Then in headless Chromium
// (Debian `chromium`, driven by playwright-core): against a real broker with topics, messages, a
// consumer group with committed offsets and a group whose id is markup, the page shows the broker
// and controller, every partition with leader and ISR, the groups with their lag (the markup as
// text), and a rate chart that draws itself from live produce traffic; a screenshot is saved to
// test-artifacts/dashboard.png. Last, with the admin API replaced by fixed answers (page.route),
// under-replicated and offline partitions and a hanging transaction are highlighted
// (test-artifacts/dashboard-degraded.png),
// and an API that stops answering shows as an error banner over the last figures.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { test } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { dashboardContentSecurityPolicy, dashboardCss, dashboardHtml, dashboardJs } from "../../src/admin/dashboard/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { assignmentV0, commitOffsets, findCoordinator, RawMember, subscriptionV0 } from "../helpers/groups.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { skipUnless } from "../helpers/tools.ts";
import { produce, WireClient } from "../helpers/wire.ts";

const OVERRIDES = { "admin.listeners": "http://127.0.0.1:0", "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "4" };
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"];
const ARTIFACTS = new URL("../../test-artifacts/", import.meta.url).pathname;
/** The one absolute URL the script holds: a namespace name for createElementNS, never fetched. */
const SVG_NAMESPACE = "http://www.w3.org/2000/svg";
/** A group id that is markup: the page must show it as text and run none of it. */
const HOSTILE_GROUP = `<img src=x onerror="window.pwned=1"></td>&amp;`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withBroker(fn: (b: TestBroker) => Promise<void>): Promise<void> {
  const b = await startBroker(OVERRIDES);
  try {
    await fn(b);
  } finally {
    await b.stop();
  }
}

async function createTopic(b: TestBroker, name: string, partitions: number): Promise<void> {
  const res = await fetch(`${b.adminUrl}/v1/topics`, { method: "POST", body: JSON.stringify({ name, partitions }), headers: { "content-type": "application/json" } });
  assert.equal(res.status, 201, `create ${name}: ${await res.text()}`);
}

async function launch(): Promise<Browser> {
  return await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
}

/** A page that fails the test on a script error or a console error (a CSP refusal shows as one). */
async function strictPage(browser: Browser): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  page.on("request", (r) => requests.push(r.url()));
  return { page, problems, requests };
}

/** Each row of a table's body as its cells' text. */
async function rows(page: Page, table: string): Promise<string[][]> {
  return await page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => (td.textContent ?? "").trim())));
}

/** Waits until the chart has at least `n` points with a rate above zero. */
async function chartMoving(page: Page, id: string, n: number): Promise<void> {
  await page.waitForFunction(
    ([chart, need]) => {
      const svg = document.getElementById(chart as string);
      const values = (svg?.getAttribute("data-values") ?? "").split(" ").filter((v) => Number(v) > 0);
      return values.length >= (need as number) && svg!.querySelector("polyline") !== null;
    },
    [id, n],
    { timeout: 30_000, polling: 250 },
  );
}

async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = ARTIFACTS + name;
  await page.screenshot({ path, fullPage: true });
  console.log(`dashboard screenshot: ${path}`);
  return path;
}

test("dashboard: GET / serves the embedded page, stylesheet and script with a strict CSP and no URL beyond the admin listener", async () => {
  await withBroker(async (b) => {
    const page = await fetch(`${b.adminUrl}/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(page.headers.get("content-security-policy"), dashboardContentSecurityPolicy);
    assert.match(dashboardContentSecurityPolicy, /default-src 'none'/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    const html = await page.text();
    assert.equal(html, dashboardHtml, "the page is the string the module holds (embedded, not read from a file)");
    assert.match(html, /^<!doctype html>/);

    const css = await fetch(`${b.adminUrl}/dashboard.css`);
    assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
    assert.equal(await css.text(), dashboardCss);
    const js = await fetch(`${b.adminUrl}/dashboard.js`);
    assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(await js.text(), dashboardJs);

    // What the page may load: its own two assets and an empty data: icon, by relative URL.
    const refs = [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/g)].map((m) => m[1]).sort();
    assert.deepEqual(refs, ["dashboard.css", "dashboard.js", "data:,"]);
    for (const [what, text] of [["page", html], ["stylesheet", dashboardCss], ["script", dashboardJs]]) {
      const rest = text.replaceAll(SVG_NAMESPACE, "");
      assert.doesNotMatch(rest, /[a-z][a-z0-9+.-]*:\/\//i, `${what}: no absolute URL`);
      assert.doesNotMatch(rest, /["'(]\s*\/\//, `${what}: no protocol-relative URL`);
      assert.doesNotMatch(rest, /@import|url\(/i, `${what}: no imported CSS or url()`);
    }
    // The script never hands the browser HTML: data become text nodes.
    assert.doesNotMatch(dashboardJs, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    // No backquote or unreplaced placeholder escaped from the TypeScript template.
    assert.doesNotMatch(dashboardJs, /`|\$\{/);
    assert.match(dashboardJs, /const POLL_MS = 2000;/);
  });
});

test("dashboard: /v1/stats counts records and batch bytes per topic, with a monotonic clock", async () => {
  await withBroker(async (b) => {
    await createTopic(b, "metered", 1);
    const first = await (await fetch(`${b.adminUrl}/v1/stats`)).json();
    assert.equal(first.broker_id, 0);
    assert.equal(typeof first.time_ms, "number");
    assert.equal(typeof first.monotonic_ms, "number");
    const c = await WireClient.connect(b.port);
    try {
      const batch = buildBatch(valueRecords(7, "m", 20));
      assert.equal((await produce(c, "metered", 0, batch)).errorCode, 0);
      await sleep(5);
      const second = await (await fetch(`${b.adminUrl}/v1/stats`)).json();
      assert.ok(second.monotonic_ms > first.monotonic_ms, "the clock moves");
      assert.deepEqual(second.topics, [{ topic: "metered", messages_in: 7, bytes_in: batch.length, bytes_out: 0 }]);
    } finally {
      c.close();
    }
  });
});

test("dashboard: headless Chromium shows the broker, topics with leader and ISR, groups with lag, and a live rate chart", { skip: skipUnless("chromium") }, async () => {
  await withBroker(async (b) => {
    await createTopic(b, "orders", 3);
    await createTopic(b, "payments.v1", 2);
    await createTopic(b, "clicks", 1);
    const c = await WireClient.connect(b.port);
    const member = await RawMember.connect(b.port, "billing", { sessionTimeoutMs: 60_000, protocols: [{ name: "range", metadata: subscriptionV0(["orders"]) }] });
    let producing = true;
    let traffic: Promise<void> = Promise.resolve();
    let browser: Browser | null = null;
    try {
      // orders: 10, 4 and 7 records; payments.v1: 3 and 0. These stay put while the page is open.
      for (const [topic, partition, n] of [["orders", 0, 10], ["orders", 1, 4], ["orders", 2, 7], ["payments.v1", 0, 3]] as const) {
        assert.equal((await produce(c, topic, partition, buildBatch(valueRecords(n, "x", 50)))).errorCode, 0);
      }
      await findCoordinator(c, "billing");
      await member.join();
      assert.equal(await member.syncAsLeader((ids) => ({ [ids[0]]: assignmentV0({ orders: [0, 1, 2] }) })), 0);
      assert.deepEqual(await member.commit({ orders: { 0: 3n, 1: 4n, 2: 2n } }), [0, 0, 0]); // lag 7 + 0 + 5
      await findCoordinator(c, HOSTILE_GROUP);
      assert.deepEqual(await commitOffsets(c, HOSTILE_GROUP, { "payments.v1": { 0: 1n } }), [0]); // lag 2

      // Live traffic on clicks (only), so the rates move while the figures above stay fixed.
      traffic = (async () => {
        const p = await WireClient.connect(b.port);
        try {
          while (producing) {
            assert.equal((await produce(p, "clicks", 0, buildBatch(valueRecords(25, "c", 100)))).errorCode, 0);
            await sleep(150);
          }
        } finally {
          p.close();
        }
      })();

      browser = await launch();
      const { page, problems, requests } = await strictPage(browser);
      await page.goto(`${b.adminUrl}/`);
      await chartMoving(page, "chart-messages", 2);
      await chartMoving(page, "chart-bytes", 2);

      assert.equal(await page.textContent("#cluster-id"), b.broker.clusterId);
      assert.equal(await page.textContent("#controller-id"), "0");
      assert.match((await page.textContent("#status")) ?? "", /^live · updated/);
      assert.equal(await page.isHidden("#error"), true, "no error banner");

      const brokerRows = await rows(page, "brokers");
      assert.deepEqual(brokerRows.map((r) => r.slice(0, 4)), [["0", `127.0.0.1:${b.port}`, "–", "controllerthis broker"]]);
      assert.ok(Number(brokerRows[0][4].replace(/[^\d.]/g, "")) > 0, `broker 0 has a message rate: ${brokerRows[0][4]}`);

      // Topics (internal ones hidden until asked for), healthy, with their rates.
      const topics = await rows(page, "topics");
      assert.deepEqual(topics.map((r) => r.slice(0, 5).concat(r[7])), [
        ["clicks", "1", "1", "0", "0", "healthy"],
        ["orders", "3", "1", "0", "0", "healthy"],
        ["payments.v1", "2", "1", "0", "0", "healthy"],
      ]);
      assert.ok(Number(topics[0][5].replace(/[^\d.]/g, "")) > 0, `clicks has a message rate: ${topics[0][5]}`);
      assert.equal(topics[1][5], "0", "orders gets no traffic now");

      // Every partition with its leader, replicas, ISR, log end and high watermark.
      const parts = (await rows(page, "partitions")).filter((r) => r[0] !== "clicks");
      assert.deepEqual(parts.map((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[8]]), [
        ["orders", "0", "0", "0", "0", "10", "10", "healthy"],
        ["orders", "1", "0", "0", "0", "4", "4", "healthy"],
        ["orders", "2", "0", "0", "0", "7", "7", "healthy"],
        ["payments.v1", "0", "0", "0", "0", "3", "3", "healthy"],
        ["payments.v1", "1", "0", "0", "0", "0", "0", "healthy"],
      ]);

      // Groups with their lag; the markup group id is text, and none of it ran.
      assert.deepEqual(await rows(page, "groups"), [
        [HOSTILE_GROUP, "Empty", "0", "1", "2", "0"],
        ["billing", "Stable", "1", "3", "12", "0"],
      ].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
      assert.deepEqual(await rows(page, "offsets"), [
        [HOSTILE_GROUP, "payments.v1", "0", "1", "3", "2"],
        ["billing", "orders", "0", "3", "10", "7"],
        ["billing", "orders", "1", "4", "4", "0"],
        ["billing", "orders", "2", "2", "7", "5"],
      ].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
      assert.equal(await page.evaluate(() => document.querySelectorAll("img").length), 0, "the group id made no element");
      assert.equal(await page.evaluate(() => (globalThis as { pwned?: number }).pwned), undefined, "nor ran");

      const tiles = await page.$$eval(".tile", (ts) => ts.map((t) => [t.querySelector("span")!.textContent, t.querySelector("b")!.textContent]));
      const tile = new Map(tiles as [string, string][]);
      assert.equal(tile.get("Brokers"), "1");
      assert.equal(tile.get("Under-replicated"), "0");
      assert.equal(tile.get("Offline"), "0");
      assert.equal(tile.get("Total lag"), "14");

      // Internal topics on request.
      await page.check("#show-internal");
      assert.ok((await rows(page, "topics")).some((r) => r[0] === "__consumer_offsets internal"), "internal topics shown");
      await page.uncheck("#show-internal");

      // Only the admin listener was asked for anything; nothing failed or was refused.
      const origin = new URL(b.adminUrl).origin;
      assert.deepEqual(requests.filter((u) => new URL(u).origin !== origin), []);
      assert.deepEqual(problems, []);
      await screenshot(page, "dashboard.png");
    } finally {
      producing = false;
      await traffic.catch(() => {});
      await browser?.close();
      member.close();
      c.close();
    }
  });
});

test("dashboard: under-replicated and offline partitions are highlighted (admin API answers staged in the browser)", { skip: skipUnless("chromium") }, async () => {
  const base = "http://strand.test";
  let monotonicMs = 1_000_000;
  let messages = 0;
  let stopping = false;
  const partition = (p: number, leader: number | null, replicas: number[], isr: number[]) => ({
    partition: p, leader, leader_epoch: 3, replicas, isr,
    under_replicated: isr.length < replicas.length, offline: leader === null,
    local_replica: "online", log_start_offset: 0, log_end_offset: 1200 + p, high_watermark: 1200 + p, size_bytes: 81_920 * (p + 1),
  });
  const answers: Record<string, () => unknown> = {
    "/v1/cluster": () => ({
      cluster_id: "Jq1cQ0rFTd2pTxWmBZ8fkA", controller_id: 1, local_broker_id: 1,
      brokers: [1, 2].map((id) => ({ id, host: `kafka-${id}.example`, port: 9092, rack: `rack-${id}`, is_controller: id === 1, is_local: id === 1 })),
    }),
    "/v1/topics": () => [{ name: "ledger", topic_id: "x", internal: false, partitions: 3, replication_factor: 3, under_replicated_partitions: 1, offline_partitions: 1 }],
    "/v1/topics/ledger/partitions": () => [partition(0, 1, [1, 2, 3], [1, 2, 3]), partition(1, 2, [2, 3, 1], [2, 1]), partition(2, null, [3, 1, 2], [])],
    "/v1/groups": () => [],
    "/v1/cluster/groups": () => ({ groups: [], unreachable: [] }),
    "/v1/cluster/stats": () => ({ brokers: [] }),
    "/v1/quotas": () => ({ quotas: [], throttled: [] }),
    "/v1/transactions": () => ({
      broker_id: 1, transaction_max_timeout_ms: 900_000, coordinator: [], hanging: 1,
      open_on_partitions: [
        { topic: "ledger", partition: 0, producer_id: "4000", producer_epoch: 2, first_offset: 1100, last_write_ms: 0, age_ms: 3_600_000, hanging: true },
        { topic: "ledger", partition: 1, producer_id: "4001", producer_epoch: 0, first_offset: 1190, last_write_ms: 0, age_ms: 2_000, hanging: false },
      ],
    }),
    "/v1/log-dirs": () => ({
      log_dirs: [
        { dir: "/data1/strand", online: true, offline_reason: null, partitions: 3, usable_bytes: 52_428_800, total_bytes: 1e12, min_free_bytes: 104_857_600, appends_refused: "log dir /data1/strand has 52428800 bytes usable, below log.dir.min.free.bytes=104857600: appends are refused until space is freed", full: false },
        { dir: "/data2/strand", online: false, offline_reason: "EIO: i/o error, write", partitions: 0, usable_bytes: null, total_bytes: null, min_free_bytes: 104_857_600, appends_refused: null, full: false },
      ],
      unserved_partitions: [{ topic: "ledger", partition: 2, reason: "ledger-2 is offline: its log dir failed" }],
    }),
    "/v1/stats": () => {
      monotonicMs += 2_000;
      messages += 1_000;
      return { broker_id: 1, time_ms: 0, monotonic_ms: monotonicMs, topics: [{ topic: "ledger", messages_in: messages, bytes_in: messages * 200, bytes_out: 0 }] };
    },
  };
  const browser = await launch();
  try {
    const { page, problems } = await strictPage(browser);
    await page.route(`${base}/**`, (route) => {
      const path = new URL(route.request().url()).pathname;
      const assets: Record<string, [string, string]> = {
        "/": [dashboardHtml, "text/html; charset=utf-8"],
        "/dashboard.css": [dashboardCss, "text/css; charset=utf-8"],
        "/dashboard.js": [dashboardJs, "text/javascript; charset=utf-8"],
      };
      if (path in assets) {
        return route.fulfill({ status: 200, body: assets[path][0], headers: { "content-type": assets[path][1], "content-security-policy": dashboardContentSecurityPolicy } });
      }
      if (stopping) return route.fulfill({ status: 503, json: { error: "the broker is stopping", phase: "stopping" } });
      const answer = answers[path];
      if (answer === undefined) return route.fulfill({ status: 404, json: { error: `no route GET ${path}` } });
      return route.fulfill({ status: 200, json: answer() });
    });
    await page.goto(`${base}/`);
    await chartMoving(page, "chart-messages", 2);

    const classes = await page.$$eval("#partitions tbody tr", (trs) => trs.map((tr) => [tr.getAttribute("data-partition"), tr.className]));
    assert.deepEqual(classes, [["0", ""], ["1", "warn"], ["2", "bad"]]);
    const parts = await rows(page, "partitions");
    assert.deepEqual(parts.map((r) => [r[1], r[2], r[3], r[4], r[8]]), [
      ["0", "1", "1, 2, 3", "1, 2, 3", "healthy"],
      ["1", "2", "2, 3, 1", "2, 13", "under-replicated"], // ISR 2, 1, and 3 struck out as missing
      ["2", "none", "3, 1, 2", "empty312", "offline"],
    ]);
    assert.equal(await page.getAttribute("#partitions tbody tr[data-partition='1'] td:nth-child(5)", "title"), "not in sync: 3");
    assert.deepEqual(await page.$$eval("#topics tbody tr", (trs) => trs.map((tr) => tr.className)), ["bad"], "a topic with an offline partition is red");
    const tiles = new Map(await page.$$eval(".tile", (ts) => ts.map((t) => [t.querySelector("span")!.textContent, t.className] as [string, string])));
    assert.equal(tiles.get("Under-replicated"), "tile warn");
    assert.equal(tiles.get("Offline"), "tile bad");
    // Open transactions on partitions led here, the hanging one (older than transaction.max.timeout.ms) first and red.
    const txns = await rows(page, "transactions");
    assert.deepEqual(txns.map((r) => [r[0], r[1], r[2], r[4], r[5], r[6]]), [["ledger", "0", "4000", "1,100", "3,600 s", "hanging"], ["ledger", "1", "4001", "1,190", "2 s", "open"]]);
    assert.deepEqual(await page.$$eval("#transactions tbody tr", (trs) => trs.map((tr) => tr.className)), ["warn", ""]);
    assert.equal(tiles.get("Hanging transactions"), "tile bad");
    // 1,000 messages every 2,000 ms of the broker's clock: 500/s, whatever the browser's timing.
    const values = ((await page.getAttribute("#chart-messages", "data-values")) ?? "").split(" ");
    assert.ok(values.length >= 2 && values.every((v) => v === "500.000"), `rates ${values}`);
    // This broker's storage: a dir refusing appends, a failed dir, a partition it cannot serve.
    const storage = (await page.textContent("#storage")) ?? "";
    assert.match(storage, /below log\.dir\.min\.free\.bytes=104857600: appends are refused until space is freed \(50\.0 MiB free, log\.dir\.min\.free\.bytes 100 MiB\)/);
    assert.match(storage, /Log dir \/data2\/strand is offline: EIO/);
    assert.match(storage, /Not ready: 1 partition\(s\) this broker should lead cannot be served: ledger-2 is offline/);
    assert.deepEqual(problems, []);
    await screenshot(page, "dashboard-degraded.png");

    // When the API stops answering, the page says so and keeps the last figures. (A poll may be
    // between its two rounds of requests when that happens: the failing path may be a topic's.)
    stopping = true;
    await page.waitForSelector("#error:not([hidden])", { timeout: 10_000 });
    assert.match((await page.textContent("#error")) ?? "", /^Cannot read the admin API: v1\/[\w./-]+: the broker is stopping$/);
    assert.match((await page.textContent("#status")) ?? "", /^stale · /);
    assert.equal((await rows(page, "partitions")).length, 3);
  } finally {
    await browser.close();
  }
});
