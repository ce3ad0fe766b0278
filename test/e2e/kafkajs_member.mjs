// A kafkajs group consumer in its own process, so a test can kill it (SIGKILL: no LeaveGroup, no
// last commit) and watch the group hand its partitions over after the session timeout.
// Usage: <runtime> kafkajs_member.mjs <bootstrap> <group> <topic> <sessionTimeoutMs>
// Prints one line per event to stdout, written synchronously (so a line is in the pipe before
// the offset it reports can be committed): `J <json assignment>` after each join, `M <partition>
// <offset> <value>` per message processed.
import { writeSync } from "node:fs";
import { Kafka, logLevel } from "kafkajs";

const [bootstrap, groupId, topic, sessionTimeout] = process.argv.slice(2);
const out = (line) => writeSync(1, line + "\n");
const kafka = new Kafka({ clientId: "killable", brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
const consumer = kafka.consumer({ groupId, sessionTimeout: Number(sessionTimeout), heartbeatInterval: 500, rebalanceTimeout: 20000 });
consumer.on(consumer.events.GROUP_JOIN, (e) => out(`J ${JSON.stringify({ memberId: e.payload.memberId, assignment: e.payload.memberAssignment })}`));
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  eachMessage: async ({ partition, message }) => out(`M ${partition} ${message.offset} ${message.value.toString()}`),
});
