// The dashboard's browser script, served as /dashboard.js. Every dashboardPollMs it reads the
// admin API's JSON routes (relative URLs, so the page also works behind a proxy under a prefix):
// /v1/cluster, /v1/topics, /v1/topics/{t}/partitions (for at most dashboardTopicsDetailedMax
// topics), /v1/cluster/groups and /v1/cluster/groups/{g} (every coordinator's groups, at most
// dashboardGroupsDetailedMax detailed; this broker's /v1/groups when the cluster routes are not
// there), /v1/cluster/stats (every broker's counters, for the brokers' rates), /v1/stats and
// /v1/quotas (the clients this broker throttled under their quotas), /v1/transactions (open and
// hanging transactions on partitions led here), and redraws the page. Rates are the increase of /v1/stats' counters over the increase of its
// monotonic clock between two polls (a counter that went down restarted from zero, as Prometheus
// takes it), so the chart's first point comes with the second poll.
//
// Escaping: values from the broker (topic names, group ids, hosts, error messages) reach the DOM
// only as text nodes (h() below) or through setAttribute on title/data-* attributes; the script
// never assigns HTML. Class names come from fixed tables, never from data.
//
// Plain ES2020 in one string: no backquotes and no dollar-brace inside it except the limits
// interpolated here.

import { dashboardChartPointsMax, dashboardGroupsDetailedMax, dashboardPollMs, dashboardTopicsDetailedMax } from "../../util/mod.ts";

export const dashboardJs = String.raw`"use strict";
(() => {
  const POLL_MS = ${dashboardPollMs};
  const POINTS_MAX = ${dashboardChartPointsMax};
  const TOPICS_DETAILED_MAX = ${dashboardTopicsDetailedMax};
  const GROUPS_DETAILED_MAX = ${dashboardGroupsDetailedMax};
  const REQUEST_TIMEOUT_MS = 10000;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const SVG_TAGS = new Set(["line", "text", "polyline", "polygon", "circle"]);

  const $ = (id) => document.getElementById(id);

  /** An element; strings among the children become text nodes, never markup. */
  function h(tag, attrs, ...children) {
    const e = SVG_TAGS.has(tag) ? document.createElementNS(SVG_NS, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) e.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
      if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // ---- formatting

  const intFmt = new Intl.NumberFormat("en-US");
  const fmtInt = (n) => (n === null || n === undefined ? "–" : typeof n === "number" ? intFmt.format(n) : String(n));
  function fmtRate(x) {
    if (x >= 1e6) return (x / 1e6).toFixed(x >= 1e7 ? 0 : 1) + "M";
    if (x >= 1e4) return (x / 1e3).toFixed(x >= 1e5 ? 0 : 1) + "k";
    return x >= 10 || x === 0 ? intFmt.format(Math.round(x)) : x.toFixed(1);
  }
  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  function fmtBytes(x) {
    if (x === null || x === undefined) return "–";
    let i = 0;
    while (x >= 1024 && i < UNITS.length - 1) { x /= 1024; i++; }
    return (i === 0 ? String(Math.round(x)) : x.toFixed(x >= 100 ? 0 : 1)) + " " + UNITS[i];
  }
  const fmtTime = (d) => d.toTimeString().slice(0, 8);

  const badge = (tone, text) => h("span", { class: "badge " + tone }, text);
  const num = (v, extra) => h("td", { class: "num" + (extra ? " " + extra : "") }, v);

  // ---- fetching

  async function getJson(path) {
    const res = await fetch(path, { headers: { accept: "application/json" }, cache: "no-store", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!res.ok) {
      let why = res.status + " " + res.statusText;
      try { why = (await res.json()).error || why; } catch (_) { /* not JSON */ }
      const err = new Error(path + ": " + why);
      err.status = res.status;
      throw err;
    }
    return await res.json();
  }
  // A topic or group deleted between two requests answers 404: only that means "gone". Any other
  // failure (a timeout on a loaded broker, a 503) fails the whole poll, which is retried, rather
  // than dropping rows that still exist.
  const orNull = (p) => p.catch((e) => { if (e && e.status === 404) return null; throw e; });

  // ---- rates

  const samples = []; // { t: monotonic ms, messages: per s, bytes: per s }
  let previous = null; // the last /v1/stats answer
  let topicRates = new Map(); // topic -> { messages, bytes } per s
  const increase = (before, now) => (now >= before ? now - before : now);

  // Per-broker rates from /v1/cluster/stats: each broker's counters over its own clock.
  let previousByBroker = new Map(); // broker id -> its last stats
  let brokerRates = new Map(); // broker id -> { messages, bytes } per s
  function addClusterStats(cs) {
    const rates = new Map();
    const next = new Map();
    for (const b of cs === null ? [] : cs.brokers) {
      if (b.stats === null) continue;
      next.set(b.broker_id, b.stats);
      const p = previousByBroker.get(b.broker_id);
      const dtMs = p ? b.stats.monotonic_ms - p.monotonic_ms : 0;
      if (!p || dtMs <= 0) continue;
      const before = new Map(p.topics.map((t) => [t.topic, t]));
      let messages = 0, bytes = 0;
      for (const t of b.stats.topics) {
        const x = before.get(t.topic) || { messages_in: 0, bytes_in: 0 };
        messages += increase(x.messages_in, t.messages_in);
        bytes += increase(x.bytes_in, t.bytes_in);
      }
      rates.set(b.broker_id, { messages: (messages * 1000) / dtMs, bytes: (bytes * 1000) / dtMs });
    }
    previousByBroker = next;
    brokerRates = rates;
  }

  function addStats(stats) {
    const p = previous;
    previous = stats;
    if (p === null) return;
    const dtMs = stats.monotonic_ms - p.monotonic_ms;
    if (dtMs <= 0 || stats.broker_id !== p.broker_id) { samples.length = 0; topicRates = new Map(); return; }
    const before = new Map(p.topics.map((t) => [t.topic, t]));
    const rates = new Map();
    let messages = 0, bytes = 0;
    for (const t of stats.topics) {
      const b = before.get(t.topic) || { messages_in: 0, bytes_in: 0 };
      const m = increase(b.messages_in, t.messages_in), y = increase(b.bytes_in, t.bytes_in);
      rates.set(t.topic, { messages: (m * 1000) / dtMs, bytes: (y * 1000) / dtMs });
      messages += m;
      bytes += y;
    }
    topicRates = rates;
    samples.push({ t: stats.monotonic_ms, messages: (messages * 1000) / dtMs, bytes: (bytes * 1000) / dtMs });
    while (samples.length > POINTS_MAX) samples.shift();
  }

  // ---- chart

  /** The smallest of 1, 2, 4, 6, 8, 10 times a power of base^k (k: unit steps) at or above v. */
  function niceTop(v, base) {
    if (!(v > 0)) return 1;
    let unit = 1;
    while (v / unit >= base) unit *= base;
    const scaled = v / unit;
    const mag = Math.pow(10, Math.floor(Math.log10(scaled)));
    for (const m of [1, 2, 4, 6, 8, 10]) if (m * mag >= scaled) return m * mag * unit;
    return 10 * mag * unit;
  }

  /** Time-axis ticks: the smallest step that needs at most four of them over spanMs. */
  function tickStepMs(spanMs) {
    for (const s of [5, 10, 15, 30, 60, 120]) if (spanMs / (s * 1000) <= 4) return s * 1000;
    return 300000;
  }
  const ago = (ms) => (ms < 120000 ? "-" + Math.round(ms / 1000) + " s" : "-" + Math.round(ms / 60000) + " min");

  /**
   * Redraws one chart from the samples. The time axis covers what has been measured, at least
   * five polls and at most POINTS_MAX, so a fresh page fills its chart and a long-open one slides.
   */
  function drawChart(svg, key, fmt, base) {
    const W = 600, H = 180, L = 64, R = 10, T = 10, B = 24;
    const now = samples.length > 0 ? samples[samples.length - 1].t : 0;
    const measuredMs = samples.length > 0 ? now - samples[0].t : 0;
    const spanMs = Math.min(POINTS_MAX * POLL_MS, Math.max(5 * POLL_MS, measuredMs));
    const shown = samples.filter((s) => now - s.t <= spanMs);
    const top = niceTop(Math.max(0, ...shown.map((s) => s[key])), base);
    const x = (t) => L + (W - L - R) * (1 - (now - t) / spanMs);
    const y = (v) => T + (H - T - B) * (1 - v / top);
    const parts = [];
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4, yy = y(v).toFixed(1);
      parts.push(h("line", { class: "grid", x1: L, x2: W - R, y1: yy, y2: yy }));
      parts.push(h("text", { class: "axis", x: L - 8, y: (y(v) + 4).toFixed(1), "text-anchor": "end" }, fmt(v)));
    }
    const step = tickStepMs(spanMs);
    for (let t = 0; t <= spanMs; t += step) {
      parts.push(h("text", { class: "axis", x: x(now - t).toFixed(1), y: H - 6, "text-anchor": t === 0 ? "end" : "middle" }, t === 0 ? "now" : ago(t)));
    }
    if (shown.length === 0) {
      parts.push(h("text", { class: "wait", x: (L + W) / 2, y: H / 2, "text-anchor": "middle" }, "measuring…"));
    } else {
      const pts = shown.map((s) => x(s.t).toFixed(1) + "," + y(s[key]).toFixed(1));
      const first = shown[0], last = shown[shown.length - 1];
      const floor = x(last.t).toFixed(1) + "," + y(0).toFixed(1) + " " + x(first.t).toFixed(1) + "," + y(0).toFixed(1);
      parts.push(h("polygon", { class: "area", points: pts.join(" ") + " " + floor }));
      parts.push(h("polyline", { class: "line", points: pts.join(" ") }));
      parts.push(h("circle", { class: "dot", cx: x(last.t).toFixed(1), cy: y(last[key]).toFixed(1), r: 3 }));
    }
    svg.replaceChildren(...parts);
    svg.setAttribute("data-points", String(shown.length));
    svg.setAttribute("data-values", shown.map((s) => s[key].toFixed(3)).join(" "));
  }

  // ---- tables

  function fill(id, rows, emptyText) {
    const table = $(id);
    const cols = table.tHead.rows[0].cells.length;
    const body = rows.length > 0 ? rows : [h("tr", { class: "empty" }, h("td", { colspan: cols }, emptyText))];
    table.tBodies[0].replaceChildren(...body);
  }

  function health(underReplicated, offline) {
    if (offline) return { row: "bad", badge: badge("bad", "offline") };
    if (underReplicated) return { row: "warn", badge: badge("warn", "under-replicated") };
    return { row: null, badge: badge("ok", "healthy") };
  }

  const GROUP_STATE_TONES = { Stable: "ok", Empty: "muted", Dead: "muted", PreparingRebalance: "warn", CompletingRebalance: "warn" };

  function tile(label, value, tone) {
    return h("div", { class: "tile" + (tone ? " " + tone : "") }, h("span", null, label), h("b", null, value));
  }

  let last = null; // the latest complete reading, redrawn when the internal-topics toggle changes

  function render() {
    if (last === null) return;
    const { cluster, topics, partitions, groups, details, storageState, quotas, txns, clusterWide, unreachable } = last;
    const showInternal = $("show-internal").checked;
    const local = cluster.local_broker_id;

    document.title = "strand · " + (cluster.cluster_id || "cluster");
    $("cluster-id").textContent = cluster.cluster_id || "–";
    $("controller-id").textContent = cluster.controller_id === null ? "none" : String(cluster.controller_id);
    $("local-id").textContent = String(local);
    $("rate-scope").textContent = "appended to partitions led by broker " + local;
    $("groups-scope").textContent = clusterWide ? "across every coordinator" : "coordinated by broker " + local;
    const peers = $("peers");
    peers.textContent = unreachable.map((u) => "Broker " + u.broker_id + "'s admin API does not answer: " + u.error).join(" · ");
    peers.hidden = unreachable.length === 0;

    // Storage of the broker serving the page: a failed dir, appends refused for lack of space.
    const storage = [];
    for (const d of storageState === null ? [] : storageState.log_dirs) {
      if (!d.online) storage.push("Log dir " + d.dir + " is offline: " + d.offline_reason);
      else if (d.appends_refused !== null) storage.push(d.appends_refused + " (" + fmtBytes(d.usable_bytes || 0) + " free, log.dir.min.free.bytes " + fmtBytes(d.min_free_bytes) + ")");
    }
    const unserved = storageState === null ? [] : storageState.unserved_partitions;
    if (unserved.length > 0) storage.push("Not ready: " + unserved.length + " partition(s) this broker should lead cannot be served: " + unserved[0].reason);
    const storageBox = $("storage");
    storageBox.textContent = storage.join(" · ");
    storageBox.hidden = storage.length === 0;

    // Brokers.
    fill("brokers", cluster.brokers.map((b) => h("tr", { "data-broker": b.id },
      num(b.id),
      h("td", { class: "name" }, b.host + ":" + b.port),
      h("td", null, b.rack === null ? h("span", { class: "dim" }, "–") : b.rack),
      h("td", null, b.is_controller ? badge("info", "controller") : null, b.is_local ? badge("muted", "this broker") : null),
      num(brokerRates.has(b.id) ? fmtRate(brokerRates.get(b.id).messages) : "–"),
      num(brokerRates.has(b.id) ? fmtBytes(brokerRates.get(b.id).bytes) + "/s" : "–"),
    )), "no live brokers");

    // Topics and partitions.
    const visible = topics.filter((t) => showInternal || !t.internal);
    fill("topics", visible.map((t) => {
      const hl = health(t.under_replicated_partitions > 0, t.offline_partitions > 0);
      const r = topicRates.get(t.name);
      return h("tr", { class: hl.row, "data-topic": t.name },
        h("td", { class: "name" }, t.name, t.internal ? " " : null, t.internal ? badge("muted", "internal") : null),
        num(fmtInt(t.partitions)), num(fmtInt(t.replication_factor)),
        num(fmtInt(t.under_replicated_partitions), t.under_replicated_partitions > 0 ? "warn" : null),
        num(fmtInt(t.offline_partitions), t.offline_partitions > 0 ? "bad" : null),
        num(r ? fmtRate(r.messages) : "–"), num(r ? fmtBytes(r.bytes) + "/s" : "–"),
        h("td", null, hl.badge));
    }), showInternal || topics.length === 0 ? "no topics" : "no topics (internal ones hidden)");

    const partRows = [];
    for (const t of visible) {
      const ps = partitions.get(t.name);
      if (ps === undefined) continue;
      if (ps === null) { partRows.push(h("tr", { class: "note" }, h("td", { colspan: 9 }, t.name + ": partitions not available"))); continue; }
      for (const p of ps) {
        const hl = health(p.under_replicated, p.offline);
        const missing = p.replicas.filter((r) => !p.isr.includes(r));
        partRows.push(h("tr", { class: hl.row, "data-topic": t.name, "data-partition": p.partition },
          h("td", { class: "name" }, t.name),
          num(p.partition),
          num(p.leader === null ? h("span", { class: "none" }, "none") : p.leader),
          h("td", null, p.replicas.join(", ")),
          h("td", { title: missing.length > 0 ? "not in sync: " + missing.join(", ") : null },
            p.isr.length > 0 ? p.isr.join(", ") : h("span", { class: "none" }, "empty"),
            missing.map((r) => h("span", { class: "missing" }, String(r)))),
          num(fmtInt(p.log_end_offset)), num(fmtInt(p.high_watermark)), num(fmtBytes(p.size_bytes)),
          h("td", null, hl.badge)));
      }
    }
    if (topics.length > TOPICS_DETAILED_MAX) {
      partRows.push(h("tr", { class: "note" }, h("td", { colspan: 9 }, "partitions of the first " + TOPICS_DETAILED_MAX + " of " + topics.length + " topics shown")));
    }
    fill("partitions", partRows, "no partitions");

    // Groups and their lag.
    fill("groups", groups.map((g) => {
      const d = details.get(g.group_id);
      const tone = GROUP_STATE_TONES[g.state] || "muted";
      return h("tr", { "data-group": g.group_id },
        h("td", { class: "name" }, g.group_id),
        h("td", null, badge(tone, g.state)),
        num(d ? fmtInt(d.members.length) : "–"),
        num(d ? fmtInt(d.offsets.length) : "–"),
        num(d ? fmtInt(d.total_lag) : "–"),
        num(g.coordinator_id));
    }), "no consumer groups");

    const offsetRows = [];
    for (const g of groups) {
      const d = details.get(g.group_id);
      if (!d) continue;
      for (const o of d.offsets) {
        offsetRows.push(h("tr", { "data-group": g.group_id, "data-topic": o.topic, "data-partition": o.partition },
          h("td", { class: "name" }, g.group_id), h("td", { class: "name" }, o.topic), num(o.partition),
          num(fmtInt(o.committed_offset)), num(fmtInt(o.high_watermark)),
          h("td", { class: "num", title: o.lag === null ? "its leader's high watermark is not known here" : null },
            o.lag === null ? h("span", { class: "dim" }, "–") : h("b", null, fmtInt(o.lag)))));
      }
    }
    if (groups.length > GROUPS_DETAILED_MAX) {
      offsetRows.push(h("tr", { class: "note" }, h("td", { colspan: 6 }, "offsets of the first " + GROUPS_DETAILED_MAX + " of " + groups.length + " groups shown")));
    }
    fill("offsets", offsetRows, "no committed offsets");

    // Clients throttled by their quotas (on this broker), the latest throttled first.
    const throttled = quotas === null ? [] : quotas.throttled.slice().sort((a, b) => b.last_throttle_time_ms - a.last_throttle_time_ms);
    const QUOTA_UNITS = { produce: "B/s", fetch: "B/s", request: "%" };
    const fmtQuota = (type, v) => (QUOTA_UNITS[type] === "%" ? v.toFixed(1) + " %" : fmtBytes(v) + "/s");
    fill("throttled", throttled.map((t) => h("tr", { class: t.last_throttle_time_ms > 0 ? "warn" : null, "data-quota": t.type, "data-client": t.client_id, "data-user": t.user },
      h("td", null, badge("info", t.type)),
      h("td", { class: "name" }, t.user === "" ? h("span", { class: "dim" }, "any") : t.user),
      h("td", { class: "name" }, t.client_id === "" ? h("span", { class: "dim" }, "any") : t.client_id),
      num(fmtQuota(t.type, t.quota)), num(fmtQuota(t.type, t.rate)),
      num(fmtInt(t.throttled_total)), num(fmtInt(t.last_throttle_time_ms) + " ms"))),
      quotas === null ? "quotas not available" : "no client throttled");

    // Open transactions on partitions led here; hanging ones hold read_committed consumers back.
    const open = txns === null ? [] : txns.open_on_partitions.slice().sort((a, b) => b.age_ms - a.age_ms);
    fill("transactions", open.map((t) => h("tr", { class: t.hanging ? "warn" : null, "data-topic": t.topic, "data-partition": t.partition },
      h("td", { class: "name" }, t.topic), num(t.partition), num(t.producer_id), num(t.producer_epoch), num(fmtInt(t.first_offset)),
      num(fmtInt(Math.round(t.age_ms / 1000)) + " s"), h("td", null, badge(t.hanging ? "bad" : "info", t.hanging ? "hanging" : "open")))),
      txns === null ? "transactions not available" : "no open transaction");

    // Summary tiles and charts.
    const under = topics.reduce((a, t) => a + t.under_replicated_partitions, 0);
    const offline = topics.reduce((a, t) => a + t.offline_partitions, 0);
    const lag = [...details.values()].reduce((a, d) => a + (d ? d.total_lag : 0), 0);
    const now = samples.length > 0 ? samples[samples.length - 1] : null;
    $("tiles").replaceChildren(
      tile("Brokers", fmtInt(cluster.brokers.length), "ok"),
      tile("Controller", cluster.controller_id === null ? "none" : String(cluster.controller_id), cluster.controller_id === null ? "bad" : "ok"),
      tile("Topics", fmtInt(topics.filter((t) => !t.internal).length)),
      tile("Partitions", fmtInt(topics.reduce((a, t) => a + t.partitions, 0))),
      tile("Under-replicated", fmtInt(under), under > 0 ? "warn" : "ok"),
      tile("Offline", fmtInt(offline), offline > 0 ? "bad" : "ok"),
      tile("Groups", fmtInt(groups.length)),
      tile("Total lag", fmtInt(lag)),
      tile("Hanging transactions", txns === null ? "–" : fmtInt(txns.hanging), txns !== null && txns.hanging > 0 ? "bad" : "ok"),
    );
    $("rate-messages").textContent = now ? fmtRate(now.messages) + " msg/s" : "–";
    $("rate-bytes").textContent = now ? fmtBytes(now.bytes) + "/s" : "–";
    drawChart($("chart-messages"), "messages", fmtRate, 10);
    drawChart($("chart-bytes"), "bytes", (v) => fmtBytes(v) + "/s", 1024);
  }

  function setStatus(ok, text) {
    const s = $("status");
    s.className = "status " + (ok ? "live" : "stale");
    s.textContent = text;
  }

  // ---- polling

  async function poll() {
    const [cluster, topics, clusterGroups, stats, storageState, quotas, txns, clusterStats] = await Promise.all([
      getJson("v1/cluster"), getJson("v1/topics"), orNull(getJson("v1/cluster/groups")), getJson("v1/stats"), getJson("v1/log-dirs"), orNull(getJson("v1/quotas")),
      orNull(getJson("v1/transactions")), orNull(getJson("v1/cluster/stats")),
    ]);
    // Without the cluster routes (an older broker): this broker's groups only.
    const clusterWide = clusterGroups !== null;
    const groups = clusterWide ? clusterGroups.groups
      : (await getJson("v1/groups")).map((g) => Object.assign({}, g, { coordinator_id: cluster.local_broker_id }));
    const unreachable = clusterWide ? clusterGroups.unreachable : [];
    const groupPath = clusterWide ? "v1/cluster/groups/" : "v1/groups/";
    topics.sort((a, b) => (a.internal !== b.internal ? (a.internal ? 1 : -1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    groups.sort((a, b) => (a.group_id < b.group_id ? -1 : a.group_id > b.group_id ? 1 : 0));
    const detailed = topics.slice(0, TOPICS_DETAILED_MAX);
    const [parts, dets] = await Promise.all([
      Promise.all(detailed.map((t) => orNull(getJson("v1/topics/" + encodeURIComponent(t.name) + "/partitions")))),
      Promise.all(groups.slice(0, GROUPS_DETAILED_MAX).map((g) => orNull(getJson(groupPath + encodeURIComponent(g.group_id))))),
    ]);
    addStats(stats);
    addClusterStats(clusterStats);
    const partitions = new Map(detailed.map((t, i) => [t.name, parts[i]]));
    const details = new Map(groups.slice(0, GROUPS_DETAILED_MAX).map((g, i) => [g.group_id, dets[i]]));
    last = { cluster, topics, partitions, groups, details, storageState, quotas, txns, clusterWide, unreachable };
    render();
  }

  async function loop() {
    const started = Date.now();
    try {
      await poll();
      $("error").hidden = true;
      setStatus(true, "live · updated " + fmtTime(new Date()));
    } catch (e) {
      const message = e && e.message ? e.message : String(e);
      $("error").textContent = "Cannot read the admin API: " + message;
      $("error").hidden = false;
      setStatus(false, "stale · " + fmtTime(new Date()));
    }
    setTimeout(loop, Math.max(0, POLL_MS - (Date.now() - started)));
  }

  $("show-internal").addEventListener("change", render);
  $("footer").textContent = "strand admin · refreshes every " + POLL_MS / 1000 + " s · brokers, partitions and groups of the whole cluster; throughput chart of this broker";
  loop();
})();
`;
