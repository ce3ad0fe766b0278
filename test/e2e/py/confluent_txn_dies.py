#!/usr/bin/python3
# confluent-kafka (Debian python3-confluent-kafka, librdkafka) for issue 15's "a producer that
# begins a transaction and dies": three modes, each a separate process, so the test can SIGKILL
# the first one mid-transaction.
#   begin  BOOTSTRAP TOPIC TXN_ID N TIMEOUT_MS: init_transactions, begin_transaction, produce N
#          records "lost-<i>" to partition 0, flush (every one acknowledged by the broker), print
#          "produced N", then wait to be killed (never commits or aborts).
#   commit BOOTSTRAP TOPIC TXN_ID N: another transactional producer commits N records "kept-<i>".
#   read   BOOTSTRAP TOPIC ISOLATION EXPECT: every value of partition 0 from the beginning, once at
#          least EXPECT arrived and 2 s passed with nothing new (or 60 s passed).
# commit and read print one JSON line.
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition


def transactional(bootstrap, txn_id, timeout_ms):
    p = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": txn_id,
        "transaction.timeout.ms": timeout_ms,
        "linger.ms": 5,
    })
    p.init_transactions(30)
    return p


def begin(bootstrap, topic, txn_id, n, timeout_ms):
    p = transactional(bootstrap, txn_id, timeout_ms)
    p.begin_transaction()
    delivered = []
    for i in range(n):
        p.produce(topic, partition=0, value=b"lost-%d" % i, on_delivery=lambda err, m: delivered.append(err))
    p.flush(30)
    if len(delivered) != n or any(e is not None for e in delivered):
        print("delivery failed: %r" % delivered, flush=True)
        sys.exit(1)
    print("produced %d" % n, flush=True)
    time.sleep(600)


def commit(bootstrap, topic, txn_id, n):
    p = transactional(bootstrap, txn_id, 60000)
    p.begin_transaction()
    for i in range(n):
        p.produce(topic, partition=0, value=b"kept-%d" % i)
    p.commit_transaction(30)
    print(json.dumps({"committed": n}), flush=True)


def read(bootstrap, topic, isolation, expect):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "reader-%s-%d" % (isolation, time.time_ns()),
        "enable.auto.commit": False,
        "isolation.level": isolation,
    })
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out = []
    deadline = time.time() + 60
    last_new = time.time()
    while time.time() < deadline and not (len(out) >= expect and time.time() - last_new >= 2):
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        out.append(m.value().decode())
        last_new = time.time()
    c.close()
    print(json.dumps({"values": out, "waited_s": round(time.time() - deadline + 60, 1)}), flush=True)


if __name__ == "__main__":
    mode, a = sys.argv[1], sys.argv[2:]
    if mode == "begin":
        begin(a[0], a[1], a[2], int(a[3]), int(a[4]))
    elif mode == "commit":
        commit(a[0], a[1], a[2], int(a[3]))
    else:
        read(a[0], a[1], a[2], int(a[3]))
