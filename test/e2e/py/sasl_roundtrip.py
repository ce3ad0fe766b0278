#!/usr/bin/python3
# A SASL_PLAINTEXT, SSL or SASL_SSL round trip with either Debian Python client: N messages
# produced (acks=all), then read back from partition 0 by assignment (no group), each checked in order.
# Usage: sasl_roundtrip.py CLIENT BOOTSTRAP TOPIC MECHANISM USER PASSWORD [N [PROTOCOL CAFILE [CERTFILE KEYFILE]]]
#   CLIENT: kafka-python (python3-kafka) or confluent (python3-confluent-kafka, librdkafka)
#   PROTOCOL: SASL_PLAINTEXT (default), SSL (MECHANISM "-": no SASL) or SASL_SSL; CAFILE the PEM CA,
#   CERTFILE and KEYFILE a client certificate
# Prints one JSON line: {"client", "mechanism", "sent", "received", "ok", "error"}
import json
import sys


def kafka_python(bootstrap, topic, mechanism, user, password, n, tls):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    auth = dict(security_protocol=tls["protocol"])
    if tls["protocol"].startswith("SASL_"):
        auth.update(sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
    if tls["protocol"].endswith("SSL"):
        auth.update(ssl_cafile=tls["ca"], ssl_check_hostname=True)
        if tls["cert"]:
            auth.update(ssl_certfile=tls["cert"], ssl_keyfile=tls["key"])
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=20000, max_block_ms=20000, **auth)
    futures = [producer.send(topic, partition=0, value=b"m-%d" % i) for i in range(n)]
    producer.flush(timeout=30)
    for f in futures:
        f.get(timeout=10)
    producer.close(timeout=10)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000, **auth)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for m in consumer:
        got.append(m.value)
        if len(got) == n:
            break
    consumer.close()
    return got


def confluent(bootstrap, topic, mechanism, user, password, n, tls):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
    auth = {"security.protocol": tls["protocol"]}
    if tls["protocol"].startswith("SASL_"):
        auth.update({"sasl.mechanisms": mechanism, "sasl.username": user, "sasl.password": password})
    if tls["protocol"].endswith("SSL"):
        auth.update({"ssl.ca.location": tls["ca"]})
        if tls["cert"]:
            auth.update({"ssl.certificate.location": tls["cert"], "ssl.key.location": tls["key"]})
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **auth})
    for i in range(n):
        producer.produce(topic, value=b"m-%d" % i, partition=0,
                         on_delivery=lambda err, msg: errors.append(str(err)) if err else None)
        producer.poll(0)
    left = producer.flush(30)
    if left or errors:
        raise RuntimeError("produce: %d undelivered, errors %s" % (left, errors[:3]))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False, **auth})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    idle = 0
    while len(got) < n and idle < 20:
        msg = consumer.poll(1.0)
        if msg is None:
            idle += 1
            continue
        if msg.error():
            raise RuntimeError(str(msg.error()))
        got.append(msg.value())
    consumer.close()
    return got


def main():
    client, bootstrap, topic, mechanism, user, password = sys.argv[1:7]
    n = int(sys.argv[7]) if len(sys.argv) > 7 else 1000
    rest = sys.argv[8:] + [None] * 4
    tls = {"protocol": rest[0] or "SASL_PLAINTEXT", "ca": rest[1], "cert": rest[2], "key": rest[3]}
    summary = {"client": client, "mechanism": mechanism, "sent": 0, "received": 0, "ok": False, "error": None}
    try:
        got = (kafka_python if client == "kafka-python" else confluent)(bootstrap, topic, mechanism, user, password, n, tls)
        summary["sent"] = n
        summary["received"] = len(got)
        summary["ok"] = got == [b"m-%d" % i for i in range(n)]
    except Exception as e:  # the summary line says what failed
        summary["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(summary))


main()
