import { startBroker } from "/work/wt/i13-tlswire/test/helpers/broker.ts";
import { CertDir } from "/work/wt/i13-tlswire/test/helpers/certs.ts";
import { writeFileSync } from "node:fs";
const d = new CertDir();
const ca = d.ca("x");
const enc = d.leaf(ca, { subject: "/CN=localhost", keyFormat: "encrypted", password: "right" });
const other = d.leaf(ca, { subject: "/CN=other" });
const ks = d.dir + "/ks.pem"; writeFileSync(ks, enc.key + enc.cert);
const mm = d.dir + "/mm.pem"; writeFileSync(mm, other.key + enc.cert);
for (const extra of [{ "ssl.keystore.location": ks, "ssl.key.password": "wrong" }, { "ssl.keystore.location": ks }, { "ssl.keystore.location": mm }, { "ssl.keystore.location": ks, "ssl.key.password": "right", "ssl.cipher.suites": "NOPE_SUITE" }]) {
  try { const b = await startBroker({ listeners: "SSL://127.0.0.1:0", ...extra }); console.log("started!"); await b.stop(); } catch (e) { console.log("ERR", (e as Error).name, (e as Error).message); }
}
d.cleanup();
