// Brokers of a ZooKeeper cluster started in the test's own process (startBroker over real
// sockets), each with a client listener (CLIENT) and a separate inter-broker one (BROKER,
// inter.broker.listener.name), logging into a recordingLogger the test can read. For tests that
// need a broker's internals (its services, fetchers, authorizer); test/helpers/cluster.ts runs
// broker processes instead.
import { startBroker, type TestBroker, tempDir } from "./broker.ts";
import { recordingLogger } from "./faulty_platform.ts";

export interface InProcessNode {
  b: TestBroker;
  id: number;
  logger: ReturnType<typeof recordingLogger>;
  /** Port of the inter-broker listener. */
  brokerPort: number;
}

/** Broker `id` of the cluster at `connect` (a chroot of the test's ZooKeeper); `extra` overrides. */
export async function startInProcessNode(id: number, connect: string, extra: Record<string, string> = {}): Promise<InProcessNode> {
  const logger = recordingLogger();
  const b = await startBroker({
    "broker.id": String(id),
    "zookeeper.connect": connect,
    "zookeeper.session.timeout.ms": "6000",
    "listeners": "CLIENT://127.0.0.1:0,BROKER://127.0.0.1:0",
    "listener.security.protocol.map": "CLIENT:PLAINTEXT,BROKER:PLAINTEXT",
    "inter.broker.listener.name": "BROKER",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "1",
    "replica.fetch.wait.max.ms": "100",
    ...extra,
  }, tempDir(), logger);
  return { b, id, logger, brokerPort: b.broker.boundPorts.find((p) => p.name === "BROKER")!.port };
}

/** Polls cond every 20 ms until it holds; throws naming `what` after timeoutMs. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
