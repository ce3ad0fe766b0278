// DescribeCluster (60) v0-1, as a Kafka 3.8 broker in ZooKeeper mode answers it: the cluster id,
// the live brokers on the listener asked (with their racks), the controller, and the cluster's
// authorized operations only when asked for (0 without DESCRIBE on the cluster). Sent over a real
// socket, and by @platformatic/kafka's own DescribeCluster v0/v1 codec (kafkajs 2.2 and
// confluent-kafka 1.7 describe the cluster with Metadata; they never send key 60).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Connection, describeClusterV0, describeClusterV1 } from "@platformatic/kafka";
import { AclOperation, clusterResourceName, ResourceType } from "../../src/authorizer/mod.ts";
import { ApiVersionsApi, DescribeClusterApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";

const OMITTED = -2147483648;

/** Kafka's cluster operations (AclEntry.supportedOperations(CLUSTER)) as a bit set. */
const clusterOps = [
  AclOperation.CREATE,
  AclOperation.CLUSTER_ACTION,
  AclOperation.DESCRIBE_CONFIGS,
  AclOperation.ALTER_CONFIGS,
  AclOperation.IDEMPOTENT_WRITE,
  AclOperation.ALTER,
  AclOperation.DESCRIBE,
].reduce((bits, op) => bits | (1 << op), 0);

test("DescribeCluster v0 and v1 over the wire: cluster id, brokers with racks, controller; operations only when asked", async () => {
  const b = await startBroker({ "broker.rack": "rack-a" });
  const c = await WireClient.connect(b.port);
  try {
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const entry = (versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).find((k) => k.apiKey === 60);
    assert.deepEqual(entry && [entry.minVersion, entry.maxVersion], [0, 1], "ApiVersions advertises DescribeCluster 0-1");

    const clusterId = b.broker.services.metadata.clusterId;
    assert.ok(clusterId.length > 0);
    const expected = {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      endpointType: 1,
      clusterId,
      controllerId: 0,
      brokers: [{ brokerId: 0, host: "127.0.0.1", port: b.port, rack: "rack-a" }],
      clusterAuthorizedOperations: OMITTED,
    };
    assert.deepEqual(await c.request(DescribeClusterApi, 0, { includeClusterAuthorizedOperations: false }), expected);
    assert.deepEqual(await c.request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 }), expected);
    // No authorizer: every operation the cluster supports, as Kafka's AuthHelper answers.
    const withOps = await c.request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 });
    assert.equal(withOps.clusterAuthorizedOperations, clusterOps);

    // v1 names the endpoint type: a broker serves brokers (1) only.
    const controllers = await c.request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
    assert.deepEqual([controllers.errorCode, controllers.brokers], [ErrorCode.MISMATCHED_ENDPOINT_TYPE, []]);
    assert.match(controllers.errorMessage as string, /wanted an endpoint of type CONTROLLER/);
    const unknown = await c.request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: false, endpointType: 7 });
    assert.deepEqual([unknown.errorCode, unknown.errorMessage], [ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 7"]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("DescribeCluster with ACLs: anyone may ask; the operations are 0 without DESCRIBE on the cluster, the granted ones with it", async () => {
  const b = await startBroker(saslAclBroker);
  const alice = await WireClient.connect(b.port);
  try {
    assert.equal((await saslLogin(alice, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    const ask = () => alice.request(DescribeClusterApi, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 });
    const before = await ask();
    assert.deepEqual([before.errorCode, before.clusterAuthorizedOperations, (before.brokers as unknown[]).length], [ErrorCode.NONE, 0, 1]);
    await grant(b, "User:alice", AclOperation.DESCRIBE, ResourceType.CLUSTER, clusterResourceName);
    assert.equal((await ask()).clusterAuthorizedOperations, 1 << AclOperation.DESCRIBE);
    await grant(b, "User:alice", AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, clusterResourceName);
    // ALTER_CONFIGS implies DESCRIBE_CONFIGS, as in Kafka.
    assert.equal(
      (await ask()).clusterAuthorizedOperations,
      (1 << AclOperation.DESCRIBE) | (1 << AclOperation.ALTER_CONFIGS) | (1 << AclOperation.DESCRIBE_CONFIGS),
    );
    const plain = await alice.request(DescribeClusterApi, 0, { includeClusterAuthorizedOperations: false });
    assert.equal(plain.clusterAuthorizedOperations, OMITTED);
  } finally {
    alice.close();
    await b.stop();
  }
});

test("@platformatic/kafka's DescribeCluster v0 and v1 against strand", async () => {
  const b = await startBroker();
  const conn = new Connection("strand-describe-cluster");
  try {
    await conn.connect("127.0.0.1", b.port);
    const clusterId = b.broker.services.metadata.clusterId;
    const v0 = await describeClusterV0.api.async(conn, true, 1); // v0 has no endpoint type: the client ignores it
    assert.deepEqual(
      [v0.errorCode, v0.clusterId, v0.controllerId, v0.brokers, v0.clusterAuthorizedOperations],
      [0, clusterId, 0, [{ brokerId: 0, host: "127.0.0.1", port: b.port, rack: null }], clusterOps],
    );
    const v1 = await describeClusterV1.api.async(conn, false, 1);
    assert.deepEqual([v1.endpointType, v1.clusterId, v1.clusterAuthorizedOperations], [1, clusterId, OMITTED]);
    // The client raises the broker's error code.
    await assert.rejects(describeClusterV1.api.async(conn, false, 2), (e: { response?: { errorCode: number } }) => {
      assert.equal(e.response?.errorCode, ErrorCode.MISMATCHED_ENDPOINT_TYPE);
      return true;
    });
  } finally {
    await conn.close();
    await b.stop();
  }
});
