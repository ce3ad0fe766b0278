#!/usr/bin/python3
# confluent-kafka (Debian python3-confluent-kafka, librdkafka) consumer group against strand: a
# Producer sends N messages over the topic's partitions; then two Consumers with the same group.id
# subscribe() to the topic (FindCoordinator, JoinGroup, SyncGroup, Heartbeat through librdkafka's
# own group code) and are polled in turn from this one thread until N distinct messages arrived.
# Each commits synchronously after processing what it polled (enable.auto.commit=false). Checks:
# both consumers were assigned partitions, their assignments are disjoint and cover the topic,
# every message arrived exactly once, and the committed offsets are the partitions' end offsets.
# The topic must exist. Both consumers join before anything is produced, so no message is read
# before the group settles (which would allow duplicates across the first rebalance).
# Usage: confluent_group.py BOOTSTRAP TOPIC GROUP N PARTITIONS
# Prints one JSON line: {"client": ..., "sent": N, "received": N, "ok": bool, ...}
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition, libversion


def main():
    bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
    n, partitions = int(sys.argv[4]), int(sys.argv[5])
    summary = {"client": "confluent-kafka", "librdkafka": libversion()[0], "sent": 0, "received": 0}
    logs = []

    def log(kind):
        def on_error(e):
            if len(logs) < 20:
                logs.append("%s: %s" % (kind, e))
        return on_error

    assignments = {0: [], 1: []}

    def on_assign(idx):
        def cb(consumer, parts):
            assignments[idx] = sorted(tp.partition for tp in parts)
        return cb

    consumers = []
    for idx in (0, 1):
        c = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": "py-%d" % idx,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "partition.assignment.strategy": "range",
            "error_cb": log("consumer-%d" % idx),
        })
        c.subscribe([topic], on_assign=on_assign(idx))
        consumers.append(c)

    seen = {}
    per_consumer = [0, 0]
    commit_errors = []
    errors = []
    # Poll both until both hold partitions (librdkafka joins the group from inside poll()).
    deadline = time.time() + 60
    while time.time() < deadline and not (assignments[0] and assignments[1]):
        for c in consumers:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                seen.setdefault(m.value(), []).append(m.partition())
    summary["assignments_at_start"] = [assignments[0], assignments[1]]
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "error_cb": log("producer")})
    delivered = []

    def on_delivery(err, msg):
        if err is None:
            delivered.append((msg.partition(), msg.offset()))

    for i in range(n):
        while True:
            try:
                producer.produce(topic, partition=i % partitions, value=b"%d" % i, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    producer.flush(30)
    summary["sent"] = len(delivered)
    ends = {}
    for p, o in delivered:
        ends[p] = max(ends.get(p, 0), o + 1)

    deadline = time.time() + 90
    while len(seen) < n and time.time() < deadline:
        for idx, c in enumerate(consumers):
            msgs = c.consume(num_messages=1000, timeout=0.2)
            got = False
            for m in msgs:
                if m.error() is not None:
                    if len(errors) < 5:
                        errors.append(str(m.error()))
                    continue
                seen.setdefault(m.value(), []).append(m.partition())
                per_consumer[idx] += 1
                got = True
            if got:
                try:
                    c.commit(asynchronous=False)
                except Exception as e:  # a KafkaException
                    if len(commit_errors) < 5:
                        commit_errors.append(str(e))
    committed = consumers[0].committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    summary["committed"] = {tp.partition: tp.offset for tp in committed}
    for c in consumers:
        c.close()
    summary["received"] = sum(len(v) for v in seen.values())
    summary["distinct"] = len(seen)
    summary["per_consumer"] = per_consumer
    summary["assignments"] = [assignments[0], assignments[1]]
    summary["duplicates"] = sum(len(v) - 1 for v in seen.values())
    summary["errors"] = errors
    summary["commit_errors"] = commit_errors
    summary["client_logs"] = logs
    a0, a1 = set(assignments[0]), set(assignments[1])
    summary["ok"] = (summary["distinct"] == n and summary["duplicates"] == 0 and not errors and not commit_errors
                     and a0 and a1 and not (a0 & a1) and (a0 | a1) == set(range(partitions))
                     and all(summary["committed"].get(p) == ends.get(p, 0) for p in range(partitions))
                     and per_consumer[0] > 0 and per_consumer[1] > 0)
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
