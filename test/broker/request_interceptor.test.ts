// The dispatcher's request interceptor (a test seam, as kfake's control functions): a test can
// answer a request itself, close the connection, or slow a request down, and watch what a real
// client does about it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MetadataApi, type Struct } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

test("interceptor: kcat retries a Produce answered NOT_LEADER_OR_FOLLOWER and every line arrives once", { skip: skipUnless("kcat") }, async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  let refused = 0;
  try {
    assert.equal((await createTopic(c, "intercepted")).errorCode, 0);
    b.broker.setRequestInterceptor(({ apiKey, body }) => {
      if (apiKey !== 0 || refused >= 2) return undefined;
      refused++;
      const topics = body.topicData as { name: string; partitionData: { index: number }[] }[];
      return {
        responses: topics.map((t) => ({
          name: t.name,
          partitionResponses: t.partitionData.map((p) => ({
            index: p.index,
            errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
            baseOffset: -1n,
            logAppendTimeMs: -1n,
            logStartOffset: -1n,
            recordErrors: [],
            errorMessage: "intercepted",
          })),
        })),
        throttleTimeMs: 0,
      } satisfies Struct;
    });
    const input = Array.from({ length: 500 }, (_, i) => `line-${i}`).join("\n") + "\n";
    const p = await run("kcat", ["-b", b.bootstrap, "-P", "-t", "intercepted", "-X", "acks=all", "-X", "retry.backoff.ms=50"], { input, timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr.toString());
    assert.equal(refused, 2, "the first two Produce requests were answered by the interceptor");
    b.broker.setRequestInterceptor(null);
    const out = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "intercepted", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
    // Every line once; not necessarily in order: without idempotence, librdkafka keeps several
    // Produce requests in flight, and a retried one may land after a later one (as on Kafka).
    const lines = (text: string) => text.split("\n").filter((l) => l !== "").sort();
    assert.deepEqual(lines(out.stdout.toString()), lines(input));
  } finally {
    c.close();
    await b.stop();
  }
});

test("interceptor: 'close' closes the connection; a delayed request is answered by its handler after the wait", async () => {
  const b = await startBroker();
  try {
    b.broker.setRequestInterceptor(({ apiKey }) => (apiKey === MetadataApi.apiKey ? "close" : undefined));
    const c = await WireClient.connect(b.port);
    const answer = c.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 10_000).then(() => "answered", () => "failed");
    assert.equal(await c.waitClosed(10_000), true);
    assert.equal(await answer, "failed");
    c.close();

    let released = false;
    b.broker.setRequestInterceptor(async ({ apiKey }) => {
      if (apiKey === MetadataApi.apiKey) {
        await new Promise((r) => setTimeout(r, 300));
        released = true;
      }
      return undefined;
    });
    const d = await WireClient.connect(b.port);
    const res = await d.request(MetadataApi, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 10_000);
    assert.equal(released, true, "answered only after the interceptor let it through");
    assert.equal((res.brokers as unknown[]).length, 1, "by the handler");
    d.close();
  } finally {
    await b.stop();
  }
});
