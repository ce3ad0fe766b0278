// meta.properties as Kafka writes it: a comment line with the date in the form of Java's
// Properties.store, then cluster.id, version and broker.id; written by LogManager.startup into a
// new dir, and read back (a broker id or cluster id that differs stops start-up). The date comes
// from the UTC getters, not Date.prototype.toString (whose first call under Bun loads ICU's time
// zone data: 50-300 ms of start-up, issue 18).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { LogManager, logConfigDefaults } from "../../src/log/mod.ts";
import { javaDateUtc } from "../../src/log/log_dir_startup.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";

const platform = await loadPlatform();

test("meta.properties: the date line has Java's form, in UTC", () => {
  assert.equal(javaDateUtc(Date.UTC(2026, 11, 2, 16, 4, 24)), "Wed Dec 02 16:04:24 UTC 2026");
  assert.equal(javaDateUtc(Date.UTC(1999, 0, 31, 3, 5, 9)), "Sun Jan 31 03:05:09 UTC 1999");
});

test("meta.properties: written into a new dir at start-up; a different broker.id stops the next one", async () => {
  const dir = tempDir("strand-meta-");
  try {
    const start = async (brokerId: number) => {
      const m = new LogManager(platform, [dir], { ...logConfigDefaults }, silentLogger);
      await m.startup(brokerId, "AAAAAAAAAAAAAAAAAAAAAA");
      m.shutdown();
    };
    await start(7);
    const text = nodeFs.readFileSync(`${dir}/meta.properties`, "utf8");
    assert.match(text, /^#\n#(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d UTC \d{4}\ncluster\.id=AAAAAAAAAAAAAAAAAAAAAA\nversion=0\nbroker\.id=7\n$/);
    await start(7);
    await assert.rejects(start(8), /broker\.id=7/);
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});
