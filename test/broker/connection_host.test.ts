// ConnectionInfo.host has one spelling per address (connectionHost in server.ts): an IPv4 client of
// a dual-stack listener ("::ffff:127.0.0.1" at the socket) is 127.0.0.1, an IPv6 client is lower
// case and compressed ("::1"). The authorizer and the per-ip connection limits both see that
// spelling, and compare an ACL host or a max.connections.per.ip.overrides entry as an address, so
// Java's full IPv6 form ("0:0:0:0:0:0:0:1", what Kafka's users write) and an IPv4-mapped form
// apply. Real sockets on a broker listening on [::]:0, clients at ::1 and 127.0.0.1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation, AclPermissionType, aclStoreOf, PatternType, ResourceType } from "../../src/authorizer/mod.ts";
import { connectionHost } from "../../src/broker/mod.ts";
import { ApiVersionsApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const dualStack = { listeners: "PLAINTEXT://[::]:0" };

async function served(port: number, host: string, open: WireClient[]): Promise<boolean> {
  const c = await WireClient.connect(port, host);
  open.push(c);
  try {
    return (await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000)).errorCode === 0;
  } catch {
    return false;
  }
}

test("connectionHost: IPv4-mapped IPv6 as IPv4, IPv6 lower case and compressed, IPv4 as is, other text lower case", () => {
  assert.equal(connectionHost("::ffff:127.0.0.1"), "127.0.0.1");
  assert.equal(connectionHost("::FFFF:10.1.2.3"), "10.1.2.3");
  assert.equal(connectionHost("0:0:0:0:0:ffff:a01:203"), "10.1.2.3");
  assert.equal(connectionHost("127.0.0.1"), "127.0.0.1");
  assert.equal(connectionHost("0:0:0:0:0:0:0:1"), "::1");
  assert.equal(connectionHost("2001:DB8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  assert.equal(connectionHost("FE80::1%ETH0"), "fe80::1%eth0", "a zone-scoped address is no literal canonicalIp knows: lower case");
});

test("the authorizer sees one spelling: an ACL for 0:0:0:0:0:0:0:1 applies to a client at ::1, one for 127.0.0.1 to an IPv4 client of a dual-stack listener, and neither to the other", { timeout: 60_000 }, async () => {
  const b = await startBroker({ ...dualStack, "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "allow.everyone.if.no.acl.found": "false" });
  const open: WireClient[] = [];
  try {
    const store = aclStoreOf(b.broker.services.authorizer)!;
    const allowCreate = (prefix: string, host: string) => ({
      pattern: { resourceType: ResourceType.TOPIC, name: prefix, patternType: PatternType.PREFIXED },
      entry: { principal: "User:ANONYMOUS", host, operation: AclOperation.CREATE, permissionType: AclPermissionType.ALLOW },
    });
    const created = await store.createAcls([allowCreate("v6-", "0:0:0:0:0:0:0:1"), allowCreate("v4-", "127.0.0.1")]);
    assert.ok(created.every((r) => r.errorCode === 0), JSON.stringify(created));
    const v6 = await WireClient.connect(b.broker.port, "::1");
    const v4 = await WireClient.connect(b.broker.port, "127.0.0.1");
    open.push(v6, v4);
    assert.equal((await createTopic(v6, "v6-a")).errorCode, ErrorCode.NONE, "::1 matches the ACL host 0:0:0:0:0:0:0:1");
    assert.equal((await createTopic(v4, "v4-a")).errorCode, ErrorCode.NONE, "::ffff:127.0.0.1 matches the ACL host 127.0.0.1");
    assert.equal((await createTopic(v6, "v4-b")).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.equal((await createTopic(v4, "v6-b")).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("max.connections.per.ip.overrides name addresses in any spelling: 0:0:0:0:0:0:0:1 limits ::1, [::FFFF:127.0.0.1] limits the IPv4 client of a dual-stack listener", { timeout: 60_000 }, async () => {
  const b = await startBroker({ ...dualStack, "max.connections.per.ip": "1", "max.connections.per.ip.overrides": "0:0:0:0:0:0:0:1:3,[::FFFF:127.0.0.1]:2" });
  const open: WireClient[] = [];
  try {
    const port = b.broker.port;
    const v6 = [await served(port, "::1", open), await served(port, "::1", open), await served(port, "::1", open), await served(port, "::1", open)];
    assert.deepEqual(v6, [true, true, true, false], "::1 has the 3 its override gives");
    const v4 = [await served(port, "127.0.0.1", open), await served(port, "127.0.0.1", open), await served(port, "127.0.0.1", open)];
    assert.deepEqual(v4, [true, true, false], "127.0.0.1 has the 2 its override gives, not a count of its own as ::ffff:127.0.0.1");
    assert.equal(b.broker.networkStats().refusedTotal.get("max.connections.per.ip"), 2);
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});
