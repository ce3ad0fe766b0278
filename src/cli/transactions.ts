// strand transactions list|describe|describe-producers|find-hanging|abort: kafka-transactions.sh's
// jobs over the Kafka protocol (ListTransactions on every broker; DescribeTransactions at the
// transactional id's coordinator; DescribeProducers at a partition's leader; WriteTxnMarkers to
// abort a hanging transaction, which the broker accepts only from a principal with CLUSTER_ACTION).
import { abortTransaction, describeProducers, describeTransaction, listTransactions } from "../client/mod.ts";
import { table } from "./groups.ts";
import { commonOptionsUsage, int, Output, parseToolArgs, required, runTool, UsageError, withCluster } from "./tool.ts";

export const transactionsUsage = `Usage: strand transactions COMMAND --bootstrap-server HOST:PORT[,...] [options]

Commands:
  list                 [--state STATE] [--producer-id ID] [--duration-filter MS]
                       Transactional ids, their producer id, state and coordinator.
  describe             --transactional-id ID
                       The id's producer, epoch, state, timeout, start time and partitions.
  describe-producers   --topic NAME --partition P
                       The partition's producers and where their open transaction starts.
  find-hanging         --topic NAME --partition P [--max-transaction-timeout MS]
                       Open transactions on the partition older than the timeout (default 900000,
                       transaction.max.timeout.ms): they hold read_committed consumers back.
  abort                --topic NAME --partition P --start-offset N
                       Writes an abort marker for the open transaction starting at offset N
                       (needs CLUSTER_ACTION; refused by a single-node broker).

Options:
${commonOptionsUsage}`;

const options = {
  "transactional-id": { type: "string" as const },
  state: { type: "string" as const, multiple: true },
  "producer-id": { type: "string" as const, multiple: true },
  "duration-filter": { type: "string" as const },
  topic: { type: "string" as const },
  partition: { type: "string" as const },
  "start-offset": { type: "string" as const },
  "max-transaction-timeout": { type: "string" as const },
};

export async function transactionsCommand(args: string[]): Promise<never> {
  return await runTool("transactions", async () => {
    const { values, positionals } = parseToolArgs(args, options, transactionsUsage, 1);
    const out = new Output();
    const now = Date.now();
    switch (positionals[0]) {
      case "list":
        await withCluster(values, async (c) => {
          const rows = await listTransactions(c, {
            states: (values.state as string[] | undefined) ?? [],
            producerIds: ((values["producer-id"] as string[] | undefined) ?? []).map((x) => BigInt(x)),
            durationMs: values["duration-filter"] === undefined ? -1 : int(values, "duration-filter", -1, 0),
          });
          table(out, [["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], ...rows.map((t) => [t.transactionalId, String(t.coordinatorId), String(t.producerId), t.state])]);
        });
        break;
      case "describe": {
        const id = required(values, "transactional-id");
        await withCluster(values, async (c) => {
          const d = await describeTransaction(c, id);
          table(out, [
            ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"],
            [
              String(d.coordinatorId),
              d.transactionalId,
              String(d.producerId),
              String(d.producerEpoch),
              d.state,
              String(d.timeoutMs),
              d.startTimeMs < 0 ? "None" : String(d.startTimeMs),
              d.startTimeMs < 0 ? "None" : String(Math.max(0, now - d.startTimeMs)),
              d.partitions.map((p) => `${p.topic}-${p.partition}`).join(",") || "None",
            ],
          ]);
        });
        break;
      }
      case "describe-producers":
      case "find-hanging": {
        const topic = required(values, "topic");
        const partition = int(values, "partition", -1, 0);
        if (partition < 0) throw new UsageError("--partition is required");
        const maxMs = int(values, "max-transaction-timeout", 900_000, 0);
        await withCluster(values, async (c) => {
          let producers = await describeProducers(c, topic, partition);
          if (positionals[0] === "find-hanging") producers = producers.filter((p) => p.currentTxnStartOffset >= 0 && now - p.lastTimestampMs > maxMs);
          table(out, [
            ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"],
            ...producers.map((p) => [
              topic,
              String(partition),
              String(p.producerId),
              String(p.producerEpoch),
              String(p.coordinatorEpoch),
              p.currentTxnStartOffset < 0 ? "None" : String(p.currentTxnStartOffset),
              String(p.lastTimestampMs),
              p.currentTxnStartOffset < 0 ? "None" : String(Math.floor(Math.max(0, now - p.lastTimestampMs) / 60_000)),
            ]),
          ]);
        });
        break;
      }
      case "abort": {
        const topic = required(values, "topic");
        const partition = int(values, "partition", -1, 0);
        const start = int(values, "start-offset", -1, 0);
        if (partition < 0 || start < 0) throw new UsageError("abort takes --topic, --partition and --start-offset");
        await withCluster(values, async (c) => {
          const p = await abortTransaction(c, topic, partition, start);
          out.text(`Aborted the transaction of producer ${p.producerId} (epoch ${p.producerEpoch}) starting at offset ${start} of ${topic}-${partition}.\n`);
        });
        break;
      }
      case undefined:
        throw new UsageError("a command is required: list, describe, describe-producers, find-hanging or abort");
      default:
        throw new UsageError(`unknown command "${positionals[0]}"`);
    }
    await out.flush();
  });
}
