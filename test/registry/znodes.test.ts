// Kafka's ZooKeeper payloads: what we write must read as Kafka 3.x wrote it (the samples below
// are Kafka's own output, as zkCli.sh shows it), what Kafka writes must decode, and foreign or
// malformed content must decode to null without throwing.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BrokerIdZNode,
  ClusterIdZNode,
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityName,
  ConfigEntityZNode,
  ConfigType,
  ConsumerOffset,
  ControllerEpochZNode,
  ControllerZNode,
  DeleteTopicsTopicZNode,
  EmbeddedRegistryStore,
  ensureKafkaPaths,
  IsrChangeNotificationSequenceZNode,
  LeaderRecoveryState,
  LogDirEventNotificationSequenceZNode,
  persistentPaths,
  PreferredReplicaElectionZNode,
  ProducerIdBlockZNode,
  ReassignPartitionsZNode,
  TopicPartitionStateZNode,
  TopicZNode,
} from "../../src/registry/mod.ts";
import { uuidFromBase64 } from "../../src/util/mod.ts";
import { bytes, str, testPlatform } from "./helpers.ts";

/** Content a decoder may meet in a shared ZooKeeper: none of it may throw. */
const foreign: Uint8Array[] = [
  new Uint8Array(0),
  new Uint8Array([0xff, 0xfe, 0x00]),
  bytes("not json"),
  bytes("{"),
  bytes("null"),
  bytes("42"),
  bytes('"a string"'),
  bytes("[1,2,3]"),
  bytes("{}"),
  bytes('{"version":"x","partitions":7,"brokerid":"0","leader":1.5,"isr":"1"}'),
];

function decodesNothing(decode: (b: Uint8Array) => unknown, name: string, allowEmpty = false): void {
  for (const b of foreign) {
    if (allowEmpty && (b.length === 0 || str(b) === "{}")) continue;
    assert.equal(decode(b), null, `${name} on ${JSON.stringify(str(b))}`);
  }
}

test("znodes: /brokers/ids/<id> is Kafka's version 5 registration", () => {
  assert.equal(BrokerIdZNode.path(0), "/brokers/ids/0");
  const encoded = BrokerIdZNode.encode(
    {
      endpoints: [{
        listenerName: "PLAINTEXT",
        securityProtocol: "PLAINTEXT",
        host: "localhost",
        port: 9091,
      }],
    },
    1707276552023,
  );
  assert.equal(
    str(encoded),
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://localhost:9091"],' +
      '"jmx_port":-1,"port":9091,"host":"localhost","version":5,"timestamp":"1707276552023"}',
  );
  assert.deepEqual(BrokerIdZNode.decode(101, encoded), {
    id: 101,
    version: 5,
    endpoints: [{ listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: "localhost", port: 9091 }],
    rack: null,
    jmxPort: -1,
    timestampMs: 1707276552023,
    features: {},
  });
});

test("znodes: broker registrations with several listeners, a rack, IPv6 and older versions", () => {
  const endpoints = [
    { listenerName: "CLIENT", securityProtocol: "SASL_SSL", host: "::1", port: 9093 },
    { listenerName: "REPLICATION", securityProtocol: "PLAINTEXT", host: "10.0.0.1", port: 9094 },
    { listenerName: "INTERNAL", securityProtocol: "SSL", host: null, port: 9095 },
  ];
  const encoded = BrokerIdZNode.encode({ endpoints, rack: "dc1", jmxPort: 9999 }, 5);
  const json = JSON.parse(str(encoded));
  assert.deepEqual(json.endpoints, [
    "CLIENT://[::1]:9093",
    "REPLICATION://10.0.0.1:9094",
    "INTERNAL://:9095",
  ]);
  assert.equal(json.host, "10.0.0.1", "the first PLAINTEXT endpoint, for old clients");
  assert.equal(json.port, 9094);
  assert.equal(json.rack, "dc1");
  assert.deepEqual(BrokerIdZNode.decode(3, encoded)?.endpoints, endpoints);
  // No PLAINTEXT listener: Kafka writes a null host and port -1; no rack: no "rack" key.
  const tls = JSON.parse(str(BrokerIdZNode.encode({ endpoints: [endpoints[0]], rack: null }, 5)));
  assert.equal(tls.host, null);
  assert.equal(tls.port, -1);
  assert.equal("rack" in tls, false);
  // A Strimzi-style registration from Kafka itself.
  const strimzi = bytes(
    '{"features":{},"listener_security_protocol_map":{"PLAIN-9092":"PLAINTEXT","TLS-9093":"SSL"},' +
      '"endpoints":["PLAIN-9092://my-cluster-kafka-0.svc:9092","TLS-9093://my-cluster-kafka-0.svc:9093"],' +
      '"jmx_port":-1,"port":9092,"host":"my-cluster-kafka-0.svc","version":5,"timestamp":"1710691902130"}',
  );
  assert.deepEqual(BrokerIdZNode.decode(0, strimzi)?.endpoints[1], {
    listenerName: "TLS-9093",
    securityProtocol: "SSL",
    host: "my-cluster-kafka-0.svc",
    port: 9093,
  });
  // Version 1 had only host and port; version 2 had no protocol map (names are protocols).
  const v1 = BrokerIdZNode.decode(
    1,
    bytes('{"version":1,"host":"h","port":9092,"jmx_port":9999,"timestamp":"1"}'),
  );
  assert.deepEqual(v1?.endpoints, [{
    listenerName: "PLAINTEXT",
    securityProtocol: "PLAINTEXT",
    host: "h",
    port: 9092,
  }]);
  const v2 = BrokerIdZNode.decode(
    2,
    bytes('{"version":2,"host":"h","port":1,"jmx_port":-1,"endpoints":["SSL://h:9093"]}'),
  );
  assert.equal(v2?.endpoints[0].securityProtocol, "SSL");
  // A listener missing from the protocol map cannot be understood.
  assert.equal(
    BrokerIdZNode.decode(
      0,
      bytes('{"version":5,"jmx_port":-1,"endpoints":["X://h:1"],"listener_security_protocol_map":{}}'),
    ),
    null,
  );
  assert.equal(BrokerIdZNode.decode(0, bytes('{"version":5,"jmx_port":-1,"endpoints":["garbage"]}')), null);
  assert.equal(
    BrokerIdZNode.decode(0, bytes('{"version":5,"jmx_port":-1,"endpoints":["PLAINTEXT://h:1"],"rack":7}')),
    null,
  );
  decodesNothing((b) => BrokerIdZNode.decode(0, b), "BrokerIdZNode");
});

test("znodes: /brokers/topics/<t> is Kafka's version 3 assignment with a topic id", () => {
  assert.equal(TopicZNode.path("orders"), "/brokers/topics/orders");
  const kafka = bytes(
    '{"removing_replicas":{},"partitions":{"0":[0]},"topic_id":"ZOLr9CLNQjSW70hyIHx6BQ","adding_replicas":{},"version":3}',
  );
  const decoded = TopicZNode.decode("test", kafka);
  assert.ok(decoded !== null);
  assert.deepEqual(decoded.topicId, uuidFromBase64("ZOLr9CLNQjSW70hyIHx6BQ"));
  assert.deepEqual([...decoded.assignment], [[0, {
    replicas: [0],
    addingReplicas: [],
    removingReplicas: [],
  }]]);
  const topicId = uuidFromBase64("ZOLr9CLNQjSW70hyIHx6BQ")!;
  const assignment = new Map([
    [1, { replicas: [2, 3, 4], addingReplicas: [4], removingReplicas: [1] }],
    [0, { replicas: [1, 2], addingReplicas: [], removingReplicas: [] }],
  ]);
  const encoded = TopicZNode.encode(topicId, assignment);
  assert.equal(
    str(encoded),
    '{"partitions":{"0":[1,2],"1":[2,3,4]},"topic_id":"ZOLr9CLNQjSW70hyIHx6BQ",' +
      '"adding_replicas":{"1":[4]},"removing_replicas":{"1":[1]},"version":3}',
  );
  const back = TopicZNode.decode("t", encoded)!;
  assert.deepEqual([...back.assignment.keys()], [0, 1]);
  assert.deepEqual(back.assignment.get(1), assignment.get(1));
  // Topics from before Kafka 2.8 have no id (version 1 or 2).
  const old = TopicZNode.decode("t", bytes('{"version":1,"partitions":{"0":[1]}}'))!;
  assert.equal(old.topicId, null);
  assert.equal("topic_id" in JSON.parse(str(TopicZNode.encode(null, assignment))), false);
  assert.equal(TopicZNode.decode("t", bytes('{"version":3,"partitions":{"x":[1]}}')), null);
  assert.equal(TopicZNode.decode("t", bytes('{"version":3,"partitions":{"-1":[1]}}')), null);
  assert.equal(TopicZNode.decode("t", bytes('{"version":3,"partitions":{"0":["1"]}}')), null);
  assert.equal(TopicZNode.decode("t", bytes('{"version":3,"partitions":{},"topic_id":"short"}')), null);
  assert.throws(() => TopicZNode.path("a/b"), /invariant/);
  for (const b of foreign.filter((x) => str(x) !== "{}")) assert.equal(TopicZNode.decode("t", b), null);
});

test("znodes: a large topic znode encoded and decoded in pieces (encodeGradually, decodeGradually) is the one-piece text and result", async () => {
  const topicId = uuidFromBase64("ZOLr9CLNQjSW70hyIHx6BQ")!;
  const assignment = new Map<number, { replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }>();
  // Inserted out of order; some partitions moving.
  for (let p = 2999; p >= 0; p--) {
    assignment.set(p, { replicas: [p % 5, (p + 1) % 5], addingReplicas: p % 7 === 0 ? [4] : [], removingReplicas: p % 11 === 0 ? [0] : [] });
  }
  // What Kafka's Jackson (and JSON.stringify of one object) writes: integer keys in ascending order.
  const partitions: Record<string, number[]> = {};
  const adding: Record<string, number[]> = {};
  const removing: Record<string, number[]> = {};
  for (const [p, a] of assignment) {
    partitions[p] = a.replicas;
    if (a.addingReplicas.length > 0) adding[p] = a.addingReplicas;
    if (a.removingReplicas.length > 0) removing[p] = a.removingReplicas;
  }
  for (const id of [topicId, null]) {
    const reference = JSON.stringify({
      partitions,
      ...(id === null ? {} : { topic_id: "ZOLr9CLNQjSW70hyIHx6BQ" }),
      adding_replicas: adding,
      removing_replicas: removing,
      version: 3,
    });
    const whole = TopicZNode.encode(id, assignment);
    assert.equal(str(whole), reference);
    assert.equal(str(await TopicZNode.encodeGradually(id, assignment)), reference);
    const once = TopicZNode.decode("t", whole)!;
    const gradual = (await TopicZNode.decodeGradually("t", whole))!;
    assert.deepEqual(gradual, once);
    assert.deepEqual([...gradual.assignment.keys()], [...Array(3000).keys()], "partitions in order");
    assert.deepEqual(gradual.assignment.get(77), assignment.get(77));
  }
  assert.equal(await TopicZNode.decodeGradually("t", bytes('{"version":3,"partitions":{"0":["1"]}}')), null);
});

test("znodes: partition state is Kafka's version 1 leader and ISR", () => {
  assert.equal(TopicPartitionStateZNode.path("t", 3), "/brokers/topics/t/partitions/3/state");
  const state = {
    leaderAndIsr: { leader: 0, leaderEpoch: 0, isr: [0], leaderRecoveryState: LeaderRecoveryState.RECOVERED },
    controllerEpoch: 1,
  };
  const encoded = TopicPartitionStateZNode.encode(state);
  assert.equal(str(encoded), '{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}');
  assert.deepEqual(TopicPartitionStateZNode.decode(encoded, { version: 7 }), {
    leaderAndIsr: { ...state.leaderAndIsr, partitionEpoch: 7 },
    controllerEpoch: 1,
  });
  const recovering = TopicPartitionStateZNode.encode({
    leaderAndIsr: {
      leader: 2,
      leaderEpoch: 5,
      isr: [2],
      leaderRecoveryState: LeaderRecoveryState.RECOVERING,
    },
    controllerEpoch: 3,
  });
  assert.equal(JSON.parse(str(recovering)).leader_recovery_state, 1);
  assert.equal(
    TopicPartitionStateZNode.decode(recovering, { version: 0 })?.leaderAndIsr.leaderRecoveryState,
    1,
  );
  const noLeader = bytes('{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":3,"isr":[]}');
  assert.equal(TopicPartitionStateZNode.decode(noLeader, { version: 0 })?.leaderAndIsr.leader, -1);
  const badRecovery = bytes(
    '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":3,"isr":[1],"leader_recovery_state":9}',
  );
  assert.equal(TopicPartitionStateZNode.decode(badRecovery, { version: 0 }), null);
  decodesNothing((b) => TopicPartitionStateZNode.decode(b, { version: 0 }), "TopicPartitionStateZNode");
});

test("znodes: /controller is version 2 with kraftControllerEpoch; /controller_epoch is text", () => {
  assert.equal(ControllerZNode.path, "/controller");
  const encoded = ControllerZNode.encode(101, 1707276552920);
  assert.equal(
    str(encoded),
    '{"version":2,"brokerid":101,"timestamp":"1707276552920","kraftControllerEpoch":-1}',
  );
  assert.equal(ControllerZNode.decode(encoded), 101);
  assert.deepEqual(ControllerZNode.decodeController(encoded, 4), {
    broker: 101,
    kraftEpoch: -1,
    zkVersion: 4,
  });
  const v1 = bytes('{"version":1,"brokerid":2,"timestamp":"1"}');
  assert.deepEqual(ControllerZNode.decodeController(v1, 0), { broker: 2, kraftEpoch: null, zkVersion: 0 });
  decodesNothing(ControllerZNode.decode, "ControllerZNode");
  assert.equal(ControllerEpochZNode.path, "/controller_epoch");
  assert.equal(str(ControllerEpochZNode.encode(17)), "17");
  assert.equal(ControllerEpochZNode.decode(bytes("17")), 17);
  for (const bad of ["", "x", "1.5", "99999999999", "1 2"]) {
    assert.equal(ControllerEpochZNode.decode(bytes(bad)), null, bad);
  }
});

test("znodes: topic and broker configs, and config change notifications", () => {
  assert.equal(ConfigEntityZNode.path(ConfigType.Topic, "orders"), "/config/topics/orders");
  assert.equal(ConfigEntityZNode.path(ConfigType.Broker, "0"), "/config/brokers/0");
  assert.equal(
    ConfigEntityZNode.path(ConfigType.Broker, ConfigEntityName.Default),
    "/config/brokers/<default>",
  );
  const encoded = ConfigEntityZNode.encode(
    new Map([["retention.ms", "100000"], ["cleanup.policy", "compact"]]),
  );
  assert.equal(str(encoded), '{"version":1,"config":{"retention.ms":"100000","cleanup.policy":"compact"}}');
  assert.deepEqual(
    ConfigEntityZNode.decode(encoded),
    new Map([["retention.ms", "100000"], ["cleanup.policy", "compact"]]),
  );
  assert.deepEqual(ConfigEntityZNode.decode(new Uint8Array(0)), new Map(), "an empty node has no overrides");
  assert.deepEqual(ConfigEntityZNode.decode(bytes('{"version":1}')), new Map());
  assert.equal(ConfigEntityZNode.decode(bytes('{"version":1,"config":{"a":1}}')), null);
  assert.equal(ConfigEntityZNode.decode(bytes("not json")), null);

  const change = ConfigEntityChangeNotificationSequenceZNode;
  assert.equal(change.createPath, "/config/changes/config_change_");
  assert.equal(str(change.encode("topics/orders")), '{"version":2,"entity_path":"topics/orders"}');
  assert.equal(change.decode(change.encode("topics/orders")), "topics/orders");
  assert.equal(change.decode(bytes('{"version":1,"entity_type":"topics","entity_name":"t"}')), "topics/t");
  decodesNothing(change.decode, "ConfigEntityChangeNotificationSequenceZNode");
});

test("znodes: ISR change and log dir event notifications", () => {
  const isr = IsrChangeNotificationSequenceZNode;
  assert.equal(isr.path(), "/isr_change_notification/isr_change_");
  assert.equal(isr.path("0000000004"), "/isr_change_notification/isr_change_0000000004");
  assert.equal(isr.sequenceNumber("/isr_change_notification/isr_change_0000000004"), "0000000004");
  const encoded = isr.encode([{ topic: "t", partition: 0 }, { topic: "u", partition: 3 }]);
  assert.equal(
    str(encoded),
    '{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":3}]}',
  );
  assert.deepEqual(isr.decode(encoded), [{ topic: "t", partition: 0 }, { topic: "u", partition: 3 }]);
  assert.equal(isr.decode(bytes('{"version":1,"partitions":[{"topic":"t"}]}')), null);
  decodesNothing(isr.decode, "IsrChangeNotificationSequenceZNode");

  const logDir = LogDirEventNotificationSequenceZNode;
  assert.equal(logDir.path("0000000001"), "/log_dir_event_notification/log_dir_event_0000000001");
  assert.equal(str(logDir.encode(3)), '{"version":1,"broker":3,"event":1}');
  assert.equal(logDir.decode(logDir.encode(3)), 3);
  decodesNothing(logDir.decode, "LogDirEventNotificationSequenceZNode");
});

test("znodes: admin requests: delete topics, reassign partitions, preferred leaders", () => {
  assert.equal(DeleteTopicsTopicZNode.path("old"), "/admin/delete_topics/old");
  assert.equal(DeleteTopicsTopicZNode.encode().length, 0);
  assert.equal(ReassignPartitionsZNode.path, "/admin/reassign_partitions");
  const reassign = ReassignPartitionsZNode.encode([{ topic: "t", partition: 1, replicas: [3, 4] }]);
  assert.equal(str(reassign), '{"version":1,"partitions":[{"topic":"t","partition":1,"replicas":[3,4]}]}');
  assert.deepEqual(ReassignPartitionsZNode.decode(reassign), [{
    topic: "t",
    partition: 1,
    replicas: [3, 4],
  }]);
  assert.equal(
    ReassignPartitionsZNode.decode(bytes('{"version":1,"partitions":[{"topic":"t","partition":1}]}')),
    null,
  );
  decodesNothing(ReassignPartitionsZNode.decode, "ReassignPartitionsZNode");
  const preferred = PreferredReplicaElectionZNode.encode([{ topic: "t", partition: 2 }]);
  assert.equal(str(preferred), '{"version":1,"partitions":[{"topic":"t","partition":2}]}');
  assert.deepEqual(PreferredReplicaElectionZNode.decode(preferred), [{ topic: "t", partition: 2 }]);
  decodesNothing(PreferredReplicaElectionZNode.decode, "PreferredReplicaElectionZNode");
});

test("znodes: cluster id, old consumer offsets, producer id blocks", () => {
  assert.equal(ClusterIdZNode.path, "/cluster/id");
  const id = ClusterIdZNode.encode("Sfr7YvlkRHSHrmSrwq9mug");
  assert.equal(str(id), '{"version":"1","id":"Sfr7YvlkRHSHrmSrwq9mug"}');
  assert.equal(ClusterIdZNode.decode(id), "Sfr7YvlkRHSHrmSrwq9mug");
  decodesNothing(ClusterIdZNode.decode, "ClusterIdZNode");

  assert.equal(ConsumerOffset.path("g", "t", 4), "/consumers/g/offsets/t/4");
  assert.equal(str(ConsumerOffset.encode(9007199254740993n)), "9007199254740993");
  assert.equal(ConsumerOffset.decode(bytes("9007199254740993")), 9007199254740993n);
  for (const bad of ["", "x", "1.0", "99999999999999999999"]) {
    assert.equal(ConsumerOffset.decode(bytes(bad)), null, bad);
  }

  assert.equal(ProducerIdBlockZNode.path, "/latest_producer_id_block");
  const block = ProducerIdBlockZNode.encode({ assignedBrokerId: 1, firstProducerId: 1000n, size: 1000 });
  assert.equal(str(block), '{"version":1,"broker":1,"block_start":"1000","block_end":"1999"}');
  assert.deepEqual(ProducerIdBlockZNode.decode(block), {
    assignedBrokerId: 1,
    firstProducerId: 1000n,
    size: 1000,
  });
  assert.equal(
    ProducerIdBlockZNode.decode(bytes('{"version":1,"broker":1,"block_start":"5","block_end":"4"}')),
    null,
  );
  decodesNothing(ProducerIdBlockZNode.decode, "ProducerIdBlockZNode");
});

test("znodes: persistentPaths is Kafka's start-up list, and ensureKafkaPaths creates it", async () => {
  assert.deepEqual([...persistentPaths].sort(), [
    "/admin/delete_topics",
    "/brokers/ids",
    "/brokers/seqid",
    "/brokers/topics",
    "/config/brokers",
    "/config/changes",
    "/config/clients",
    "/config/ips",
    "/config/topics",
    "/config/users",
    "/consumers",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
  ]);
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  const r = store.session();
  await r.create("/config", bytes("kept"));
  await ensureKafkaPaths(r);
  await ensureKafkaPaths(r);
  for (const p of persistentPaths) assert.notEqual(await r.exists(p), null, p);
  assert.equal(str((await r.getData("/config")).data), "kept");
  assert.deepEqual(await r.getChildren("/brokers"), ["ids", "seqid", "topics"]);
  await store.close();
});
