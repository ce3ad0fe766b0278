#!/usr/bin/env node
// npm run bench:tls [-- --runtime bun|deno|both --mb 256 --chunk-kb 64 --rounds 3 --protocol TLSv1.3]
// Runs test/bench/tls_bench.ts under Bun, then Deno: one platform Connection pushing --mb MiB each
// way over plaintext and over TLS (certificates made by openssl), and prints MiB/s with the
// TLS/plaintext ratio per runtime. Issue 13's target for the broker is TLS >= 60% of plaintext.
// The machine is shared: read the figures as orders of magnitude, the ratios as the point.
import { runTsBench } from "./runtimes.mjs";

const results = await runTsBench("tls_bench.ts");
console.log("\nsummary: MiB/s, median of rounds (TLS as % of plaintext)");
const col = (s) => String(s).padStart(22);
console.log("".padEnd(34) + results.map((r) => col(`${r.runtime} ${r.version}`)).join(""));
const row = (label, f) => console.log(label.padEnd(34) + results.map((r) => col(f(r))).join(""));
const pct = (a, b) => `${Math.round((a / b) * 100)}%`;
row("plaintext client->server", (r) => Math.round(r.plainProduce));
row(`TLS client->server`, (r) => `${Math.round(r.tlsProduce)} (${pct(r.tlsProduce, r.plainProduce)})`);
row("plaintext server->client", (r) => Math.round(r.plainFetch));
row(`TLS server->client`, (r) => `${Math.round(r.tlsFetch)} (${pct(r.tlsFetch, r.plainFetch)})`);
row("Deno.listenTls direct (not used)", (r) => (r.denoNative === null ? "-" : `${Math.round(r.denoNative)} (${pct(r.denoNative, r.plainProduce)})`));
