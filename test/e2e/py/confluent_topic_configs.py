#!/usr/bin/python3
# confluent-kafka (Debian python3-confluent-kafka 1.7, librdkafka) and strand's topic configs: the
# AdminClient creates a topic with keys Kafka 3.8 has and strand once refused
# (message.timestamp.type=LogAppendTime, message.timestamp.difference.max.ms,
# message.format.version, segment.jitter.ms, ...), reads every key back with describe_configs,
# has a bad value refused, then a Producer sends one message stamped 1000 ms after the epoch and a
# Consumer reads it back: on a LogAppendTime topic it carries the broker's clock and that
# timestamp type, not the producer's. A keyless message to a compacted topic fails delivery with
# INVALID_RECORD.
# Usage: confluent_topic_configs.py BOOTSTRAP TOPIC
# Prints one JSON line.
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

CONFIGS = {
    "message.timestamp.type": "LogAppendTime",
    "message.timestamp.difference.max.ms": "3600000",
    "message.format.version": "2.8",
    "segment.jitter.ms": "1000",
    "preallocate": "false",
    "message.downconversion.enable": "true",
    "local.retention.ms": "-2",
    "leader.replication.throttled.replicas": "0:0",
}


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    out = {"client": "confluent-kafka", "errors": []}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=CONFIGS)])[topic].result(30)
    try:
        admin.create_topics([NewTopic(topic + "-bad", 1, 1, config={"compression.lz4.level": "99"})])[topic + "-bad"].result(30)
        out["bad_refused"] = None
    except KafkaException as e:
        out["bad_refused"] = e.args[0].name()
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    entries = list(described.values())[0].result(30)
    out["keys"] = sorted(entries.keys())
    out["values"] = {k: entries[k].value for k in CONFIGS}
    out["sources"] = {k: entries[k].source for k in CONFIGS}

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    before_ms = int(time.time() * 1000)
    producer.produce(topic, partition=0, value=b"stamped", timestamp=1000)
    producer.flush(30)
    admin.create_topics([NewTopic(topic + "-compacted", 1, 1, config={"cleanup.policy": "compact"})])[topic + "-compacted"].result(30)
    keyless = []
    producer.produce(topic + "-compacted", partition=0, value=b"no key",
                     on_delivery=lambda err, m: keyless.append(err.name() if err is not None else None))
    producer.flush(30)
    out["keyless_on_compacted"] = keyless

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "enable.auto.offset.store": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    deadline = time.time() + 30
    msg = None
    while msg is None and time.time() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            msg = m
        elif m is not None:
            out["errors"].append(str(m.error()))
    consumer.close()
    if msg is not None:
        ts_type, ts = msg.timestamp()
        out["timestamp_type_log_append"] = ts_type == TIMESTAMP_LOG_APPEND_TIME
        out["timestamp_at_or_after_send"] = ts >= before_ms
        out["timestamp"] = ts
    print(json.dumps(out))


main()
