#!/usr/bin/python3
# Consume-transform-produce with confluent-kafka transactions (librdkafka), made to survive broker
# failures as an application does: IN (N numbered records, written first) is copied to OUT in
# transactions with send_offsets_to_transaction; an abortable error aborts the transaction and
# rewinds the consumer to the group's committed offsets; a fatal one (fenced) makes a new producer
# (init_transactions fences the old epoch). Prints "P <copied>" after each commit, then checks:
# a read_committed reader of OUT sees each input record exactly once, in order; a read_uncommitted
# reader sees at least as many. With ABORT_EVERY k > 0, every k-th transaction is aborted on
# purpose: its records ("aborted-rec-*", flushed first so they are in the log) and offsets vanish,
# the consumer rewinds ("A <aborts>" after each); a read_committed reader must see none of them, a
# read_uncommitted reader every one whose delivery was acknowledged. The summary also names, from
# the consumer's side, every batch that did not start where the last commit or rewind left it
# ("jumps"), the rebalances, and the longest rewind. Last line: one JSON summary.
# Usage: rdkafka_ctp.py BOOTSTRAP IN OUT GROUP N BATCH DEADLINE_S [ABORT_EVERY]
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "py"))
from confluent_txn import read_all  # noqa: E402

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition


def say(*a):
    print(*a, flush=True)


def new_producer(bootstrap, txn_id):
    p = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": txn_id,
        "transaction.timeout.ms": 30000,
        "linger.ms": 5,
        "message.timeout.ms": 30000,
    })
    while True:
        try:
            p.init_transactions(30)
            return p
        except KafkaException as e:
            say("init_transactions: %s" % e)
            time.sleep(0.5)


def main():
    bootstrap, tin, tout, group = sys.argv[1:5]
    n, batch, deadline_s = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    abort_every = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    s = {"n": n, "commits": 0, "aborts": 0, "deliberate_aborts": 0, "fatal_restarts": 0, "rewind_retries": 0, "errors": [], "jumps": [], "rewind_max_s": 0.0, "rebalances": []}
    aborted_delivered = set()

    def on_aborted_delivery(err, msg):
        if err is None:
            aborted_delivered.add(msg.value().decode())
    plain = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "enable.idempotence": True})
    for i in range(n):
        while True:
            try:
                plain.produce(tin, partition=0, value=b"rec-%d" % i)
                break
            except BufferError:
                plain.poll(0.1)
    plain.flush(60)
    say("INPUT written")
    # The copier's times ("at N s") count from here, as the kill lines of ctp_kill_run.ts do.
    started = time.time()

    txn_id = "ctp-" + group
    producer = new_producer(bootstrap, txn_id)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest"})

    def on_rebalance(what):
        # librdkafka pauses the partitions while a rebalance waits for the application, and
        # before 2.1.0 a batch consume racing that pause could drop records (its 2.0 "known
        # issues"): rebalances are noted, so a jump can be matched with one.
        def cb(_consumer, partitions):
            note = "%s %s at %.1f s" % (what, ",".join("%d@%d" % (p.partition, p.offset) for p in partitions), time.time() - started)
            if len(s["rebalances"]) < 30:
                s["rebalances"].append(note)
        return cb
    consumer.subscribe([tin], on_assign=on_rebalance("assigned"), on_revoke=on_rebalance("revoked"), on_lost=on_rebalance("lost"))
    copied = 0
    transactions = 0
    end = time.time() + deadline_s

    def rewind():
        # Exactly-once needs the rewind: a consumer left past an aborted transaction's input never
        # copies it. So a failed committed() or seek() (a coordinator moving, a partition between
        # fetch states) is tried again, counted, and only a rewind impossible for 2 minutes ends
        # the run with an error. A partition's error comes back in tp.error with offset -1001, not
        # as an exception: a failed rewind too, not "no commit yet" (seeking to the beginning
        # would copy everything again). Returns where the next batch must start (None when
        # nothing is assigned: the next assignment starts at the committed offset).
        t0 = time.time()
        give_up = t0 + 120
        while True:
            try:
                assignment = consumer.assignment()
                committed = consumer.committed(assignment, 30)
                for tp in committed:
                    if tp.error is not None:
                        raise KafkaException(tp.error)
                for tp in committed:
                    consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
                # A rewind after an abort waits (committed() retrying UNSTABLE_OFFSET_COMMIT) until
                # the abort's marker reaches the group's __consumer_offsets partition.
                took = time.time() - t0
                s["rewind_max_s"] = max(s["rewind_max_s"], round(took, 1))
                if took > 5:
                    say("rewind took %.1f s (at %.1f s)" % (took, time.time() - started))
                return committed[0].offset if len(committed) == 1 and committed[0].offset >= 0 else None
            except KafkaException as e:
                s["rewind_retries"] += 1
                say("rewind: %s" % e)
                if time.time() > give_up:
                    raise RuntimeError("cannot rewind to the committed offsets: %s" % e)
                time.sleep(0.2)

    # Where the next batch must start: after a commit, the input's next record; after a rewind,
    # the committed offset sought. Any other start (a record skipped or read twice) is printed
    # with what came before it: the consumer-side record of a lost or repeated input range.
    expect = None
    last_action = "start"

    while time.time() < end:
        msgs = [m for m in consumer.consume(batch, 0.5) if m.error() is None]
        if not msgs:
            # Done once the group's committed offset is the input's end.
            try:
                c = consumer.committed([TopicPartition(tin, 0)], 10)[0].offset
            except KafkaException:
                c = -1
            if c >= n:
                break
            continue
        first = msgs[0].offset()
        contiguous = all(m.offset() == first + i for i, m in enumerate(msgs))
        if (expect is not None and first != expect) or not contiguous:
            jump = "expected %s, consumed %d-%d%s after %s" % (expect, first, msgs[-1].offset(), "" if contiguous else " with holes", last_action)
            say("jump: " + jump)
            if len(s["jumps"]) < 30:
                s["jumps"].append(jump)
        transactions += 1
        expect = None
        try:
            if abort_every > 0 and transactions % abort_every == 0:
                producer.begin_transaction()
                for m in msgs:
                    producer.produce(tout, partition=0, value=b"aborted-" + m.value(), on_delivery=on_aborted_delivery)
                producer.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 60)
                # In the log before the abort (abort_transaction purges what is still queued).
                producer.flush(60)
                producer.abort_transaction(60)
                s["deliberate_aborts"] += 1
                say("A %d" % s["deliberate_aborts"])
                expect = rewind()
                last_action = "abort of %d-%d, rewound to %s" % (first, msgs[-1].offset(), expect)
                if expect is not None and expect != first:
                    say("rewind: the committed offset after aborting %d-%d is %d" % (first, msgs[-1].offset(), expect))
                continue
            producer.begin_transaction()
            for m in msgs:
                producer.produce(tout, partition=0, value=b"copy-" + m.value())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 60)
            producer.commit_transaction(60)
            s["commits"] += 1
            copied = msgs[-1].offset() + 1
            expect = copied
            last_action = "commit of %d-%d" % (first, msgs[-1].offset())
            say("P %d" % copied)
        except KafkaException as e:
            err = e.args[0]
            if len(s["errors"]) < 30:
                s["errors"].append(str(err))
            # Fatal (fenced): a new producer. Otherwise (abortable, a retriable error that outlived
            # the call's timeout, a commit of unknown outcome): abort, and rewind to what committed.
            aborted = False
            if not err.fatal():
                try:
                    producer.abort_transaction(60)
                    s["aborts"] += 1
                    aborted = True
                except KafkaException as e2:
                    say("abort: %s" % e2)
            if not aborted:
                producer = new_producer(bootstrap, txn_id)
                s["fatal_restarts"] += 1
            expect = rewind()
            last_action = "error in %d-%d (%s), rewound to %s" % (first, msgs[-1].offset(), err.name(), expect)
    group_offset = consumer.committed([TopicPartition(tin, 0)], 30)[0].offset
    consumer.close()
    rc = read_all(bootstrap, tout, "read_committed", n, 90)
    ru = read_all(bootstrap, tout, "read_uncommitted", n + len(aborted_delivered), 60)
    expected = ["copy-rec-%d" % i for i in range(n)]
    ru_set = set(ru)
    s.update({
        "group_offset": group_offset,
        "committed_read": len(rc),
        "uncommitted_read": len(ru),
        "committed_exact": rc == expected,
        "first_mismatch": next((i for i, (a, b) in enumerate(zip(rc, expected)) if a != b), None),
        "duplicates": len(rc) - len(set(rc)),
        "committed_aborted": sum(1 for v in rc if v.startswith("aborted-")),
        "aborted_delivered": len(aborted_delivered),
        "uncommitted_aborted_missing": sum(1 for v in aborted_delivered if v not in ru_set),
        "uncommitted_copies_missing": sum(1 for v in expected if v not in ru_set),
    })
    s["ok"] = (s["committed_exact"] and group_offset == n and len(ru) >= n and s["committed_aborted"] == 0
               and s["uncommitted_aborted_missing"] == 0 and s["uncommitted_copies_missing"] == 0)
    say(json.dumps(s))


if __name__ == "__main__":
    main()
