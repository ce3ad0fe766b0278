#!/usr/bin/python3
# librdkafka (Debian python3-confluent-kafka) for the fetch-from-follower scenario (KIP-392).
#   rdkafka_rack.py produce BOOTSTRAP TOPIC COUNT
#     sends values "0".."COUNT-1" to partition 0 (acks=all), flushes, prints "DONE <json>".
#   rdkafka_rack.py consume BOOTSTRAP TOPIC COUNT RACK TIMEOUT_S
#     assigns partition 0 from offset 0 with client.rack=RACK (no group coordination), reads until
#     COUNT records or TIMEOUT_S, prints "DONE <json>": the values in order and any errors.
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def produce(bootstrap, topic, count):
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for n in range(count):
        p.produce(topic, value=str(n).encode(), partition=0, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(60)
    print("DONE " + json.dumps({"unflushed": left, "errors": errors}), flush=True)


def consume(bootstrap, topic, count, rack, timeout_s):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "rack-" + rack,
        "client.rack": rack,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 100,
        "topic.metadata.refresh.interval.ms": 1000,
    })
    c.assign([TopicPartition(topic, 0, 0)])
    values, errors = [], []
    deadline = time.time() + timeout_s
    while len(values) < count and time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            errors.append(str(m.error()))
            continue
        values.append(m.value().decode())
    c.close()
    print("DONE " + json.dumps({"values": values, "errors": errors}), flush=True)


if __name__ == "__main__":
    mode, bootstrap, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if mode == "produce":
        produce(bootstrap, topic, count)
    else:
        consume(bootstrap, topic, count, sys.argv[5], float(sys.argv[6]))
