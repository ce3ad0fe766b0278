// ACLs on a real ZooKeeper 3.8 (Debian package zookeeper): two brokers on one chroot, an ACL made
// through the first is stored in Kafka's layout (read back with our client and with zkCli.sh, as
// kafka-acls.sh --authorizer-properties zookeeper.connect=... would read it) and enforced by the
// second once the change notification reaches it; a deletion through the second reaches the first;
// a third broker started later loads everything before it serves.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT } from "../../src/authorizer/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { CreateAclsApi, DeleteAclsApi } from "../../src/protocol/api/mod.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { startBroker, type TestBroker, tempDir } from "../helpers/broker.ts";
import { run } from "../helpers/tools.ts";
import { WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper, sleep } from "../helpers/zookeeper.ts";

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const alice = { principal: "User:alice", host: "127.0.0.1", listener: "PLAINTEXT" };

async function zkBroker(chroot: string, id: number): Promise<TestBroker> {
  const server = await zk.get();
  return await startBroker({
    "broker.id": String(id),
    "zookeeper.connect": server.connectString + chroot,
    "zookeeper.session.timeout.ms": "4000",
    "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
    "super.users": "User:ANONYMOUS",
  }, tempDir());
}

async function until(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

const anyFilter = { resourceTypeFilter: RT.ANY, resourceNameFilter: null, patternTypeFilter: PT.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY };

test("acls on ZooKeeper: Kafka's layout, read back with zkCli.sh; a second broker follows the notifications", { skip }, async () => {
  const chroot = `/acls-${process.pid}`;
  const b1 = await zkBroker(chroot, 1);
  const b2 = await zkBroker(chroot, 2);
  let b3: TestBroker | undefined;
  const server = await zk.get();
  const reader = await ZooKeeperClient.connect(await loadPlatform(), { connectString: server.connectString + chroot, sessionTimeoutMs: 4_000 });
  try {
    const c = await WireClient.connect(b1.broker.port);
    const created = await c.request(CreateAclsApi, 3, {
      creations: [
        { resourceType: RT.TOPIC, resourceName: "orders", resourcePatternType: PT.LITERAL, principal: "User:alice", host: "*", operation: Op.READ, permissionType: Perm.ALLOW },
        { resourceType: RT.GROUP, resourceName: "app-", resourcePatternType: PT.PREFIXED, principal: "User:alice", host: "*", operation: Op.ALL, permissionType: Perm.ALLOW },
      ],
    });
    assert.deepEqual((created.results as { errorCode: number }[]).map((r) => r.errorCode), [0, 0]);
    c.close();

    assert.deepEqual(JSON.parse(dec((await reader.getData("/kafka-acl/Topic/orders")).data)), {
      version: 1,
      acls: [{ principal: "User:alice", permissionType: "Allow", operation: "Read", host: "*" }],
    });
    assert.deepEqual(JSON.parse(dec((await reader.getData("/kafka-acl-extended/prefixed/Group/app-")).data)).acls, [
      { principal: "User:alice", permissionType: "Allow", operation: "All", host: "*" },
    ]);
    const changes = (await reader.getChildren("/kafka-acl-changes")).children;
    assert.equal(changes.length, 1);
    assert.equal(dec((await reader.getData(`/kafka-acl-changes/${changes[0]}`)).data), "TOPIC:orders");
    const ext = (await reader.getChildren("/kafka-acl-extended-changes")).children;
    assert.deepEqual(JSON.parse(dec((await reader.getData(`/kafka-acl-extended-changes/${ext[0]}`)).data)), {
      version: 1, resourceType: "GROUP", name: "app-", patternType: "PREFIXED",
    });
    const cli = await run("/usr/share/zookeeper/bin/zkCli.sh", ["-server", `127.0.0.1:${server.port}`, "get", `${chroot}/kafka-acl/Topic/orders`], { timeoutMs: 60_000 });
    assert.match(cli.stdout.toString() + cli.stderr, /\{"version":1,"acls":\[\{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"\*"\}\]\}/);

    const a2 = b2.broker.services.authorizer!;
    await until(() => a2.authorize(alice, Op.READ, RT.TOPIC, "orders") && a2.authorize(alice, Op.DELETE, RT.GROUP, "app-1"), "broker 2 applies both ACLs");
    assert.equal(a2.authorize(alice, Op.WRITE, RT.TOPIC, "orders"), false);

    const c2 = await WireClient.connect(b2.broker.port);
    const del = await c2.request(DeleteAclsApi, 3, { filters: [{ ...anyFilter, resourceTypeFilter: RT.TOPIC }] });
    assert.equal((del.filterResults as { matchingAcls: unknown[] }[])[0].matchingAcls.length, 1);
    c2.close();
    const a1 = b1.broker.services.authorizer!;
    await until(() => !a1.authorize(alice, Op.READ, RT.TOPIC, "orders"), "broker 1 applies the deletion");
    assert.equal((await reader.exists("/kafka-acl/Topic/orders")), null);

    b3 = await zkBroker(chroot, 3);
    const a3 = b3.broker.services.authorizer!;
    assert.equal(a3.authorize(alice, Op.READ, RT.GROUP, "app-x"), true, "loaded at start-up");
    assert.equal(a3.authorize(alice, Op.READ, RT.TOPIC, "orders"), false);
  } finally {
    await reader.close();
    await b3?.stop();
    await b2.stop();
    await b1.stop();
    await zk.stop();
  }
});
