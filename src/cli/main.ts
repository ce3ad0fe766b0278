// strand's entry point and composition root: parses the command line and starts what was asked
// for (serve.ts loads the configuration and picks the platform for the running runtime). This file and
// src/platform/ are the only places that may touch runtime APIs.
//
//   strand serve [--config server.properties] [--override key=value]... [--log-level info]
//   strand topics|produce|consume|groups|cluster|perf|users|acls|quotas ... (client tools, one file each here)
//   strand --version | --help

import process from "node:process";
import { STRAND_COMMIT, STRAND_VERSION } from "./version.ts";

// Every command's code is imported when that command runs: start-up (of `serve` above all, and of
// `--version`) does not pay for evaluating the modules of the other commands.
const usage = `strand ${STRAND_VERSION}: a Kafka-compatible commit-log broker

Usage:
  strand serve [--config FILE] [--override KEY=VALUE]... [--log-level LEVEL]
      Runs a broker. FILE is a Kafka server.properties; --override sets one key (repeatable);
      STRAND_<KEY> environment variables set keys too (STRAND_LOG_DIRS=/data/strand → log.dirs).
      Precedence: --override, then environment, then FILE, then Kafka's defaults.
      The admin HTTP API and Prometheus /metrics listen on admin.listeners
      (default http://127.0.0.1:9644; empty turns them off).
  strand topics list|describe|create|alter|delete --bootstrap-server HOST:PORT [options]
  strand produce --bootstrap-server HOST:PORT --topic NAME [options] < LINES
  strand consume --bootstrap-server HOST:PORT --topic NAME [options]
  strand groups list|describe|reset-offsets|delete --bootstrap-server HOST:PORT [options]
  strand transactions list|describe|describe-producers|find-hanging|abort --bootstrap-server HOST:PORT [options]
  strand cluster info --bootstrap-server HOST:PORT
  strand cluster rolling-restart --admin-url URL --restart-command 'ssh {host} sudo systemctl restart strand@{id}'
  strand users list|describe|set|delete --bootstrap-server HOST:PORT [options]
  strand acls --add|--remove|--list --bootstrap-server HOST:PORT [options]
  strand quotas --describe|--alter --bootstrap-server HOST:PORT [--entity-type users|clients ...]
  strand perf produce|consume --bootstrap-server HOST:PORT --topic NAME --num-records N [options]
      Client tools speaking the Kafka protocol (they work against Kafka too), like Kafka's
      kafka-topics.sh, kafka-console-producer/consumer.sh, kafka-consumer-groups.sh and
      kafka-producer/consumer-perf-test.sh, kafka-configs.sh for SCRAM users and client
      quotas, and kafka-acls.sh for ACLs. "strand COMMAND --help" for each one's options.
  strand --version
  strand --help

With zookeeper.connect (host:port[,host:port...][/chroot]), cluster metadata lives in ZooKeeper
in Kafka's layout; without it, in an embedded registry under the first log dir, and the broker
acts as its own controller.`;

function fail(message: string, code = 2): never {
  process.stderr.write(`strand: ${message}\n`);
  process.exit(code);
}

// Literal specifiers, so the bundler of the single executable sees (and embeds) every one.
const tools: Record<string, () => Promise<(args: string[]) => Promise<never>>> = {
  topics: async () => (await import("./topics.ts")).topicsCommand,
  produce: async () => (await import("./produce.ts")).produceCommand,
  consume: async () => (await import("./consume.ts")).consumeCommand,
  groups: async () => (await import("./groups.ts")).groupsCommand,
  cluster: async () => (await import("./cluster.ts")).clusterCommand,
  perf: async () => (await import("./perf.ts")).perfCommand,
  users: async () => (await import("./users.ts")).usersCommand,
  acls: async () => (await import("./acls.ts")).aclsCommand,
  quotas: async () => (await import("./quotas.ts")).quotasCommand,
  transactions: async () => (await import("./transactions.ts")).transactionsCommand,
};

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "-V" || command === "version") {
    process.stdout.write(`strand ${STRAND_VERSION} (${STRAND_COMMIT})\n`);
    return;
  }
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(usage + "\n");
    return;
  }
  if (command === "serve") return await (await import("./serve.ts")).serve(rest);
  const tool = Object.hasOwn(tools, command) ? tools[command] : undefined;
  if (tool !== undefined) return await (await tool())(rest);
  fail(`unknown command "${command}"\n\n${usage}`);
}

await main(process.argv.slice(2));
