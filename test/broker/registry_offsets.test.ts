// OffsetCommit v0 and OffsetFetch v0 keep offsets in the registry at /consumers/<group>/..., so the
// group id becomes a path segment. A group id the registry refuses as a path (control or reserved
// characters, as ZooKeeper refuses them) is an invalid group: INVALID_GROUP_ID for a commit, no
// offset (-1) for a fetch, the connection kept, and nothing logged as an error. Found by the wire
// fuzzer (test/fuzz): the registry's BadArguments escaped the handler, which closed the connection
// with an error-level line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiVersionsApi, OffsetCommitApi, OffsetFetchApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

test("OffsetCommit v0 / OffsetFetch v0 with a group id the registry refuses as a path: INVALID_GROUP_ID, -1, no error logged", async () => {
  const logger = recordingLogger();
  const b = await startBroker({}, tempDir(), logger);
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    for (const groupId of ["g\u0001x", "tab\there", "del\u007f", "rep\ufffd", "."]) {
      const commit = await c.request(OffsetCommitApi, 0, {
        groupId,
        topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 5n, committedMetadata: "" }] }],
      });
      const codes = (commit.topics as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode);
      assert.deepEqual(codes, [ErrorCode.INVALID_GROUP_ID], JSON.stringify(groupId));
      const fetch = await c.request(OffsetFetchApi, 0, { groupId, topics: [{ name: "t", partitionIndexes: [0] }] });
      const parts = (fetch.topics as { partitions: { committedOffset: bigint; errorCode: number }[] }[])[0].partitions;
      assert.equal(parts[0].committedOffset, -1n, JSON.stringify(groupId));
    }
    // The same connection still answers.
    await c.request(ApiVersionsApi, 0, {});
    assert.deepEqual(logger.lines.filter((l) => l.level === "error"), []);
  } finally {
    c.close();
    await b.stop();
  }
});
