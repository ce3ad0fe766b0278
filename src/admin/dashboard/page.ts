// The dashboard's HTML shell: fixed markup only (headings, empty tables, the chart frames). Every
// figure is filled in by script.ts from the JSON routes, as text nodes: nothing from the broker is
// ever written into this markup. It loads dashboard.css and dashboard.js from the same origin and
// nothing else (the Content-Security-Policy in mod.ts says so to the browser too).

export const dashboardHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>strand</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="dashboard.css">
<script src="dashboard.js" defer></script>
</head>
<body>
<header class="bar">
  <span class="brand"><span class="mark"></span>strand</span>
  <span class="cluster">cluster <b id="cluster-id">…</b></span>
  <span class="cluster">controller <b id="controller-id">…</b></span>
  <span class="cluster">served by broker <b id="local-id">…</b></span>
  <span class="spacer"></span>
  <span id="status" class="status" role="status">connecting…</span>
</header>
<main>
  <div id="error" class="error" role="alert" hidden></div>
  <div id="storage" class="error" role="alert" hidden></div>
  <div id="peers" class="error" role="alert" hidden></div>
  <section id="tiles" class="tiles" aria-label="summary"></section>

  <section class="panel">
    <h2>Throughput <small id="rate-scope"></small></h2>
    <div class="charts">
      <figure class="chart">
        <figcaption><span>Messages in</span><b id="rate-messages">–</b></figcaption>
        <svg id="chart-messages" viewBox="0 0 600 180" role="img" aria-label="messages in per second"></svg>
      </figure>
      <figure class="chart bytes">
        <figcaption><span>Bytes in</span><b id="rate-bytes">–</b></figcaption>
        <svg id="chart-bytes" viewBox="0 0 600 180" role="img" aria-label="bytes in per second"></svg>
      </figure>
    </div>
  </section>

  <div class="columns">
    <section class="panel">
      <h2>Brokers</h2>
      <table id="brokers">
        <thead><tr><th class="num">ID</th><th>Address</th><th>Rack</th><th>Role</th><th class="num">Msg/s in</th><th class="num">Bytes/s in</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
    <section class="panel">
      <h2>Consumer groups <small id="groups-scope"></small></h2>
      <table id="groups">
        <thead><tr><th>Group</th><th>State</th><th class="num">Members</th><th class="num">Partitions</th><th class="num">Lag</th><th class="num">Coordinator</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
  </div>

  <section class="panel">
    <h2>Topics <label class="toggle"><input type="checkbox" id="show-internal"> show internal topics</label></h2>
    <table id="topics">
      <thead><tr><th>Topic</th><th class="num">Partitions</th><th class="num">Replication</th><th class="num">Under-replicated</th><th class="num">Offline</th><th class="num">Messages in/s</th><th class="num">Bytes in/s</th><th>Health</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section class="panel">
    <h2>Partitions</h2>
    <table id="partitions">
      <thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Leader</th><th>Replicas</th><th>In-sync replicas</th><th class="num">Log end</th><th class="num">High watermark</th><th class="num">Size</th><th>Health</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section class="panel">
    <h2>Throttled clients <small>client quotas on this broker</small></h2>
    <table id="throttled">
      <thead><tr><th>Quota</th><th>User</th><th>Client id</th><th class="num">Quota</th><th class="num">Measured</th><th class="num">Throttled</th><th class="num">Last throttle</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section class="panel">
    <h2>Open transactions <small>on partitions led by this broker; hanging: older than transaction.max.timeout.ms</small></h2>
    <table id="transactions">
      <thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Producer id</th><th class="num">Epoch</th><th class="num">First offset</th><th class="num">Age</th><th>State</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section class="panel">
    <h2>Committed offsets and lag</h2>
    <table id="offsets">
      <thead><tr><th>Group</th><th>Topic</th><th class="num">Partition</th><th class="num">Committed</th><th class="num">High watermark</th><th class="num">Lag</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
</main>
<footer id="footer"></footer>
</body>
</html>
`;
