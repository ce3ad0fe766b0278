#!/usr/bin/python3
# confluent-kafka (Debian python3-confluent-kafka, librdkafka) transactions against strand,
# consume-transform-produce: N records are written to topic IN (plain producer); a transactional
# producer (transactional.id) and a read_committed consumer in group GROUP copy them to OUT in
# transactions of at most BATCH records, each with send_offsets_to_transaction (TxnOffsetCommit),
# committed; between them, transactions whose records ("aborted-*") and offsets are aborted. Then
# a read_committed consumer of OUT must see each input record exactly once, in order, and nothing
# aborted; a read_uncommitted consumer sees the aborted records too; the group's committed offset
# is N (the aborted transactions' offsets never became visible).
# Usage: confluent_txn.py BOOTSTRAP IN OUT GROUP N [BATCH] [ABORT_EVERY]
# Prints one JSON line: {"copied": ..., "committed_read": ..., "uncommitted_read": ..., "ok": bool, ...}
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition


def read_all(bootstrap, topic, isolation, expect_at_least, deadline_s=60):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "reader-%s-%d" % (isolation, time.time_ns()),
        "enable.auto.commit": False,
        "isolation.level": isolation,
        "auto.offset.reset": "earliest",
    })
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out = []
    deadline = time.time() + deadline_s
    idle = 0
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            idle += 1
            if len(out) >= expect_at_least and idle >= 4:
                break
            continue
        idle = 0
        if m.error():
            continue
        out.append(m.value().decode())
    c.close()
    return out


def main():
    bootstrap, tin, tout, group, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    batch = int(sys.argv[6]) if len(sys.argv) > 6 else 100
    abort_every = int(sys.argv[7]) if len(sys.argv) > 7 else 3
    errors = []
    s = {"n": n, "copied": 0, "transactions": 0, "aborted_transactions": 0, "aborted_records": 0}

    plain = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(n):
        plain.produce(tin, partition=0, value=b"rec-%d" % i)
        if i % 1000 == 0:
            plain.poll(0)
    plain.flush(30)

    producer = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": "ctp-" + group,
        "transaction.timeout.ms": 60000,
        "linger.ms": 5,
        "error_cb": lambda e: errors.append("producer: %s" % e) if len(errors) < 20 else None,
    })
    producer.init_transactions(30)
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
    })
    consumer.subscribe([tin])
    deadline = time.time() + 120
    while s["copied"] < n and time.time() < deadline:
        msgs = consumer.consume(batch, 1.0)
        msgs = [m for m in msgs if m.error() is None]
        if not msgs:
            continue
        if s["transactions"] % abort_every == abort_every - 1:
            # An aborted transaction: its records and offsets vanish; the input is read again.
            producer.begin_transaction()
            for m in msgs:
                producer.produce(tout, partition=0, value=b"aborted-" + m.value())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30)
            # Written before the abort (abort_transaction purges what is still queued).
            producer.flush(30)
            producer.abort_transaction(30)
            s["aborted_transactions"] += 1
            s["aborted_records"] += len(msgs)
            s["transactions"] += 1
            # Rewind to the last committed offsets, as an application does after an abort.
            committed = consumer.committed(consumer.assignment(), 30)
            for tp in committed:
                consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
            continue
        producer.begin_transaction()
        for m in msgs:
            producer.produce(tout, partition=0, value=b"copy-" + m.value())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        s["copied"] += len(msgs)
        s["transactions"] += 1
    committed = consumer.committed([TopicPartition(tin, 0)], 30)
    s["group_offset"] = committed[0].offset
    consumer.close()

    committed_read = read_all(bootstrap, tout, "read_committed", n)
    uncommitted_read = read_all(bootstrap, tout, "read_uncommitted", n + s["aborted_records"])
    s["committed_read"] = len(committed_read)
    s["uncommitted_read"] = len(uncommitted_read)
    expected = ["copy-rec-%d" % i for i in range(n)]
    s["committed_exact"] = committed_read == expected
    s["uncommitted_aborted"] = sum(1 for v in uncommitted_read if v.startswith("aborted-"))
    s["uncommitted_copies_in_order"] = [v for v in uncommitted_read if v.startswith("copy-")] == expected
    s["errors"] = errors
    s["ok"] = (s["committed_exact"] and s["uncommitted_copies_in_order"] and s["uncommitted_aborted"] == s["aborted_records"]
               and s["group_offset"] == n and s["aborted_transactions"] > 0)
    print(json.dumps(s))


if __name__ == "__main__":
    try:
        main()
    except KafkaException as e:
        print(json.dumps({"ok": False, "exception": str(e)}))
