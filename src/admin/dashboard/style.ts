// The dashboard's stylesheet: system fonts, no images, no imports (nothing leaves the admin
// listener). Row and badge tones: ok (green), warn (amber: under-replicated, rebalancing),
// bad (red: offline, no controller), muted (grey).

export const dashboardCss = `
:root {
  --bg: #f3f5f8; --panel: #fff; --line: #e3e8ee; --text: #1d2733; --muted: #687584;
  --ok: #1f8a4c; --ok-bg: #e6f4ec; --warn: #a86400; --warn-bg: #fff4de; --bad: #c62828; --bad-bg: #fdeaea;
  --accent: #2f6fde; --accent2: #7a4fd1;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
b { font-weight: 600; }
.bar { display: flex; align-items: center; gap: 22px; padding: 0 24px; height: 48px; background: #18212c; color: #c9d3de; }
.brand { display: flex; align-items: center; gap: 8px; color: #fff; font-size: 16px; font-weight: 700; letter-spacing: .3px; }
.mark { width: 14px; height: 14px; border-radius: 3px; background: linear-gradient(135deg, #4f8cf5, #8b5cf6); }
.cluster b { color: #fff; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 500; }
.spacer { flex: 1; }
.status { display: flex; align-items: center; gap: 6px; font-size: 12px; }
.status::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: #8894a1; }
.status.live::before { background: #35c46a; box-shadow: 0 0 0 3px rgba(53,196,106,.2); }
.status.stale::before { background: #ef5350; }
main { max-width: 1280px; margin: 0 auto; padding: 18px 24px 8px; }
.error { margin-bottom: 14px; padding: 10px 14px; border: 1px solid #f3b8b8; border-radius: 8px; background: var(--bad-bg); color: var(--bad); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(118px, 1fr)); gap: 10px; margin-bottom: 14px; }
.tile { padding: 10px 12px; background: var(--panel); border: 1px solid var(--line); border-left: 3px solid var(--line); border-radius: 8px; }
.tile span { display: block; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .4px; }
.tile b { display: block; margin-top: 2px; font-size: 20px; font-variant-numeric: tabular-nums; }
.tile.warn { border-left-color: #f0a020; } .tile.warn b { color: var(--warn); }
.tile.bad { border-left-color: #e53935; } .tile.bad b { color: var(--bad); }
.tile.ok { border-left-color: #43a965; }
.panel { margin-bottom: 14px; padding: 12px 16px 14px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; box-shadow: 0 1px 2px rgba(16,24,40,.04); overflow-x: auto; }
.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 14px; }
@media (max-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr); } }
h2 { display: flex; align-items: baseline; gap: 10px; margin: 0 0 8px; font-size: 14px; font-weight: 600; }
h2 small { color: var(--muted); font-weight: 400; font-size: 12px; }
.toggle { margin-left: auto; color: var(--muted); font-size: 12px; font-weight: 400; cursor: pointer; }
table { width: 100%; border-collapse: collapse; }
th { padding: 6px 10px; border-bottom: 1px solid var(--line); color: var(--muted); font-size: 11px; font-weight: 600; text-align: left; text-transform: uppercase; letter-spacing: .4px; white-space: nowrap; }
td { padding: 6px 10px; border-bottom: 1px solid #eef1f4; white-space: nowrap; }
tbody tr:last-child td { border-bottom: 0; }
tbody tr:hover td { background: #f8fafc; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; white-space: normal; word-break: break-all; }
tr.warn td { background: var(--warn-bg); } tr.warn:hover td { background: #ffefcc; }
tr.bad td { background: var(--bad-bg); } tr.bad:hover td { background: #fbdcdc; }
tr.empty td, tr.note td { color: var(--muted); text-align: center; font-style: italic; }
td.warn { color: var(--warn); font-weight: 600; } td.bad { color: var(--bad); font-weight: 600; }
.missing { color: var(--bad); text-decoration: line-through; margin-left: 6px; }
.none { color: var(--bad); font-weight: 600; }
.dim { color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 11px; font-weight: 600; background: #eef1f4; color: var(--muted); }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.warn { background: #ffe7b8; color: var(--warn); }
.badge.bad { background: #f9d0d0; color: var(--bad); }
.badge.info { background: #e3ecfd; color: var(--accent); }
.badge + .badge { margin-left: 4px; }
.charts { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 18px; }
@media (max-width: 900px) { .charts { grid-template-columns: minmax(0, 1fr); } }
.chart { margin: 0; }
.chart figcaption { display: flex; justify-content: space-between; align-items: baseline; margin-bottom: 4px; color: var(--muted); }
.chart figcaption b { color: var(--text); font-size: 16px; font-variant-numeric: tabular-nums; }
.chart svg { display: block; width: 100%; height: auto; }
.chart .grid { stroke: #e9edf2; stroke-width: 1; }
.chart .axis { fill: var(--muted); font-size: 11px; font-family: system-ui, "DejaVu Sans", sans-serif; }
.chart .line { fill: none; stroke: var(--accent); stroke-width: 2; stroke-linejoin: round; }
.chart .area { fill: var(--accent); fill-opacity: .1; stroke: none; }
.chart .dot { fill: var(--accent); }
.chart.bytes .line { stroke: var(--accent2); } .chart.bytes .area, .chart.bytes .dot { fill: var(--accent2); }
.chart .wait { fill: var(--muted); font-size: 13px; font-family: system-ui, "DejaVu Sans", sans-serif; }
footer { max-width: 1280px; margin: 0 auto; padding: 0 24px 24px; color: var(--muted); font-size: 12px; }
`;
