#!/usr/bin/python3
# kafka-python (Debian python3-kafka 2.0.2) told to speak an old broker version, so it fetches with
# Fetch v0 (0.8.2), v1 (0.9), v2 (0.10.0) or v3 (0.10.1) and reads legacy message sets (magic 0 or
# 1), checking every message's CRC32 as it decodes. It assigns partition 0, seeks to the beginning
# (ListOffsets v0) and reads until N messages or a quiet period.
# Usage: kafka_python_old_fetch.py BOOTSTRAP TOPIC N API_VERSION [MAX_PARTITION_FETCH_BYTES]
# Prints one JSON line: {"api_version": ..., "received": n, "records": [[offset, key, value, ts, ts_type], ...], "errors": [...]}
import json
import sys

from kafka import KafkaConsumer, TopicPartition


def main():
    bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    version = tuple(int(x) for x in sys.argv[4].split("."))
    extra = {"max_partition_fetch_bytes": int(sys.argv[5])} if len(sys.argv) > 5 else {}
    out = {"api_version": sys.argv[4], "received": 0, "records": [], "errors": []}
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        api_version=version,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        request_timeout_ms=20000,
        check_crcs=True,
        **extra,
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    try:
        for m in consumer:
            out["records"].append([m.offset, (m.key or b"").decode(), (m.value or b"").decode(), m.timestamp, m.timestamp_type])
            if len(out["records"]) >= n:
                break
    except Exception as e:  # noqa: BLE001 (reported, the test fails on it)
        out["errors"].append(repr(e))
    consumer.close()
    out["received"] = len(out["records"])
    print(json.dumps(out))


main()
