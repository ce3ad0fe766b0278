#!/usr/bin/python3
# confluent-kafka (Debian python3-confluent-kafka, librdkafka) round trip against strand: a Producer
# sends N keyed messages with a header to partition 0 (acks=all, optionally compressed) and
# flushes; then a Consumer reads partition 0 back through an explicit assign() at
# OFFSET_BEGINNING and checks every message's key, value, header and offset, in order.
# The Consumer needs a group.id only because the library insists on one. strand has no group
# coordinator yet, so nothing here may make the client look for one: assign() (never
# subscribe()), enable.auto.commit=false and enable.auto.offset.store=false (no offset commits),
# no commit() and no committed(). librdkafka sends FindCoordinator (API 10) only to a broker that
# lists it in ApiVersions, which strand does not yet: the group stays in state query-coord ("no
# broker available for coordinator query", debug-level only, no error callback), and fetching an
# assigned partition goes on regardless; close() does not wait on the group.
# Usage: confluent_roundtrip.py BOOTSTRAP TOPIC [N] [COMPRESSION] [KEY=VALUE ...] (extra producer config,
# e.g. enable.idempotence=true)
# Prints one JSON line: {"client": ..., "sent": N, "received": N, "ok": bool, ...}
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition, libversion


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    compression = sys.argv[4] if len(sys.argv) > 4 else "none"
    extra = dict(a.split("=", 1) for a in sys.argv[5:])
    summary = {"client": "confluent-kafka", "librdkafka": libversion()[0], "topic": topic, "compression": compression,
               "sent": 0, "received": 0, "producer_config": extra}
    logs = []

    def log(kind):
        def on_error(e):
            if len(logs) < 20:
                logs.append("%s: %s" % (kind, e))
        return on_error

    producer = Producer({
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "compression.type": compression,
        "linger.ms": 5,
        "message.timeout.ms": 30000,
        "error_cb": log("producer"),
        **extra,
    })
    delivered = []
    failures = []

    def on_delivery(err, msg):
        if err is not None:
            failures.append(str(err))
        else:
            delivered.append(msg.offset())

    for i in range(n):
        while True:
            try:
                producer.produce(topic, partition=0, key=b"k%d" % i, value=b"value-%d-" % i + b"z" * (i % 100),
                                 headers=[("seq", b"%d" % i)], on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(30)
    summary["sent"] = len(delivered)
    summary["delivery_failures"] = failures[:5]
    summary["unflushed"] = left
    summary["offsets_dense"] = sorted(delivered) == list(range(n))

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "strand-e2e-unused",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "error_cb": log("consumer"),
    })
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    errors = []
    received = 0
    eof = False
    deadline = time.time() + 60
    while (received < n or not eof) and time.time() < deadline:
        for m in consumer.consume(num_messages=1000, timeout=1.0):
            if m.error() is not None:
                if m.error().code() == -191:  # KafkaError._PARTITION_EOF
                    eof = received >= n
                elif len(errors) < 5:
                    errors.append(str(m.error()))
                continue
            i = received
            want_value = b"value-%d-" % i + b"z" * (i % 100)
            if m.offset() != i or m.key() != b"k%d" % i or m.value() != want_value or m.headers() != [("seq", b"%d" % i)]:
                if len(errors) < 5:
                    errors.append({"at": i, "offset": m.offset(), "key": repr(m.key()), "headers": repr(m.headers())})
            received += 1
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    summary["watermarks"] = [low, high]
    consumer.close()
    summary["received"] = received
    summary["errors"] = errors
    summary["client_logs"] = logs
    summary["ok"] = (received == n and not errors and not failures and summary["offsets_dense"]
                     and [low, high] == [0, n])
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
