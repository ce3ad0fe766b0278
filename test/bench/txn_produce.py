#!/usr/bin/python3
# Transactional produce for `npm run bench` (issue 15's target: a transaction of 1,000 records
# committed at 100 transactions/s or better on one broker). confluent-kafka (librdkafka):
# T transactions of R records of 100 bytes, each begin_transaction / produce R / commit_transaction,
# into one partition; then, as the baseline measured in the same run, the same R-record batches
# from an idempotent producer flushed after each batch (acks=all, no transaction).
# Usage: txn_produce.py BOOTSTRAP TOPIC_PREFIX [T] [R]. Prints one JSON line.
import json
import sys
import time

from confluent_kafka import Producer


def main():
    bootstrap, prefix = sys.argv[1], sys.argv[2]
    t = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    r = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    value = b"x" * 100
    common = {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1000000, "queue.buffering.max.kbytes": 1048576}

    p = Producer({**common, "transactional.id": "bench-txn-%d" % time.time_ns()})
    p.init_transactions(30)
    # One warm-up transaction (coordinator lookup, AddPartitionsToTxn's first round trip).
    p.begin_transaction()
    p.produce(prefix + "-txn", partition=0, value=value)
    p.commit_transaction(30)
    t0 = time.perf_counter()
    for _ in range(t):
        p.begin_transaction()
        for _ in range(r):
            p.produce(prefix + "-txn", partition=0, value=value)
        p.commit_transaction(30)
    txn_s = time.perf_counter() - t0

    q = Producer({**common, "enable.idempotence": True, "acks": "all"})
    q.produce(prefix + "-idem", partition=0, value=value)
    q.flush(30)
    t0 = time.perf_counter()
    for _ in range(t):
        for _ in range(r):
            q.produce(prefix + "-idem", partition=0, value=value)
        q.flush(30)
    idem_s = time.perf_counter() - t0
    print(json.dumps({"transactions": t, "records_per_txn": r, "txn_s": txn_s, "txn_per_s": t / txn_s,
                      "idem_batches_per_s": t / idem_s, "idem_s": idem_s}))


if __name__ == "__main__":
    main()
