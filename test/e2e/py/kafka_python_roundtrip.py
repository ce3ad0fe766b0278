#!/usr/bin/python3
# kafka-python (Debian python3-kafka 2.0.2) round trip against strand: a KafkaProducer sends N
# keyed messages with a header (acks='all', optionally compressed), flushes; then a KafkaConsumer
# without a group (explicit assign + seek_to_beginning, no group_id, no commits) reads partition 0
# back and checks every message's key, value, header and offset, in order.
# With PRODUCER_API_VERSION (e.g. 0.10.1 or 0.9) the producer skips version probing and speaks
# that broker version: below 0.11 it sends legacy message sets (0.10: Produce v2 with magic 1;
# 0.9: Produce v1 with magic 0), which carry no headers, so none are sent or expected; the
# consumer still probes (kafka_python_old_fetch.py reads with the old Fetch versions).
# Usage: kafka_python_roundtrip.py BOOTSTRAP TOPIC [N] [COMPRESSION] [PRODUCER_API_VERSION]
# Prints one JSON line: {"client": ..., "api_version": ..., "sent": N, "received": N, "ok": bool, ...}
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    compression = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "none" else None
    forced = tuple(int(x) for x in sys.argv[5].split(".")) if len(sys.argv) > 5 else None
    legacy = forced is not None and forced < (0, 11)
    summary = {"client": "kafka-python", "topic": topic, "compression": compression or "none", "sent": 0, "received": 0}

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        **({"api_version": forced} if forced else {}),
        acks="all",
        compression_type=compression,
        linger_ms=5,
        request_timeout_ms=20000,
        max_block_ms=20000,
    )
    summary["api_version"] = ".".join(str(x) for x in producer.config["api_version"])
    offsets = []
    futures = [
        producer.send(topic, partition=0, key=b"k%d" % i, value=b"value-%d-" % i + b"y" * (i % 100),
                      headers=[] if legacy else [("seq", b"%d" % i)])
        for i in range(n)
    ]
    producer.flush(timeout=30)
    for f in futures:
        offsets.append(f.get(timeout=10).offset)
    producer.close(timeout=10)
    summary["sent"] = n
    summary["offsets_dense"] = offsets == list(range(n))

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        request_timeout_ms=20000,
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    errors = []
    received = 0
    deadline = time.time() + 60
    while received < n and time.time() < deadline:
        batch = consumer.poll(timeout_ms=1000, max_records=5000)
        for records in batch.values():
            for r in records:
                i = received
                want_value = b"value-%d-" % i + b"y" * (i % 100)
                want_headers = [] if legacy else [("seq", b"%d" % i)]
                if r.offset != i or r.key != b"k%d" % i or r.value != want_value or list(r.headers) != want_headers:
                    if len(errors) < 5:
                        errors.append({"at": i, "offset": r.offset, "key": repr(r.key), "headers": repr(r.headers)})
                received += 1
    summary["end_offset"] = consumer.end_offsets([tp])[tp]
    consumer.close()
    summary["received"] = received
    summary["errors"] = errors
    summary["ok"] = received == n and not errors and summary["offsets_dense"] and summary["end_offset"] == n
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
