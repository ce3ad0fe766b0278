// A broker whose listener cannot bind stops start-up cleanly: its logs are closed as at a clean
// shutdown (the next start does not recover them as after a crash), and the error names the cause.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startBroker, tempDir } from "../helpers/broker.ts";

test("broker start: a listener that cannot bind fails start-up with the logs closed cleanly", async () => {
  const first = await startBroker();
  const dir = tempDir();
  try {
    await assert.rejects(
      startBroker({ port: String(first.port) }, dir),
      (e: Error) =>
        /cannot listen on 127\.0\.0\.1:\d+: address already in use \(EADDRINUSE\)/.test(e.message),
    );
    assert.ok(existsSync(join(dir, ".kafka_cleanshutdown")), "the log dir is marked as cleanly shut down");
    // And the dir starts again, on a free port.
    const again = await startBroker({}, dir);
    await again.stop();
  } finally {
    await first.stop();
  }
});
