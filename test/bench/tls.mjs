#!/usr/bin/env node
// npm run bench:tls [-- --runtime bun|deno|both --mb 256 --chunk-kb 64 --rounds 3 --protocol TLSv1.3 --handshakes 200]
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
row("other-process client: plain ->", (r) => Math.round(r.external.plainProduce));
row("other-process client: TLS ->", (r) => `${Math.round(r.external.tlsProduce)} (${pct(r.external.tlsProduce, r.external.plainProduce)})`);
row("other-process client: plain <-", (r) => Math.round(r.external.plainFetch));
row("other-process client: TLS <-", (r) => `${Math.round(r.external.tlsFetch)} (${pct(r.external.tlsFetch, r.external.plainFetch)})`);
row("best round: plaintext c->s", (r) => Math.round(r.best.plainProduce));
row("best round: TLS c->s", (r) => `${Math.round(r.best.tlsProduce)} (${pct(r.best.tlsProduce, r.best.plainProduce)})`);
row("best round: plaintext s->c", (r) => Math.round(r.best.plainFetch));
row("best round: TLS s->c", (r) => `${Math.round(r.best.tlsFetch)} (${pct(r.best.tlsFetch, r.best.plainFetch)})`);
row("connects/s plaintext", (r) => (r.plainConnects === null ? "-" : Math.round(r.plainConnects)));
row("connects/s TLS", (r) => (r.tlsConnects === null ? "-" : Math.round(r.tlsConnects)));
row("Deno.listenTls direct (not used)", (r) => (r.denoNative === null ? "-" : `${Math.round(r.denoNative)} (${pct(r.denoNative, r.plainProduce)})`));
