#!/usr/bin/python3
# A librdkafka producer (Debian python3-confluent-kafka) of numbered records for the cluster
# scenarios: values "0", "1", ... sent round-robin to partitions 0..P-1 at RATE records/s until a
# line "stop" (or EOF) arrives on stdin, then flushed (bounded) and the process exits. Extra
# KEY=VALUE arguments are librdkafka producer config (enable.idempotence=true, retries, ...).
# Each delivery report is one stdout line: "A <n> <partition> <offset>" for an ack, "E <n>
# <partition> <error name>" for a failed delivery; an error callback prints "L <text>" ("F
# <text>" when librdkafka calls it fatal); the last line is "DONE <json>".
# Usage: rdkafka_numbered.py BOOTSTRAP TOPIC PARTITIONS RATE [KEY=VALUE ...]
import json
import sys
import threading
import time

from confluent_kafka import Producer


def main():
    bootstrap, topic, partitions, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    extra = dict(a.split("=", 1) for a in sys.argv[5:])
    out = sys.stdout
    lock = threading.Lock()
    stop = threading.Event()

    def emit(line):
        with lock:
            out.write(line + "\n")

    def watch_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    def on_error(e):
        emit("%s %s" % ("F" if e.fatal() else "L", str(e).replace("\n", " ")))

    def on_delivery(err, msg):
        n = int(msg.value())
        if err is None:
            emit("A %d %d %d" % (n, msg.partition(), msg.offset()))
        else:
            emit("E %d %d %s" % (n, msg.partition(), err.name()))

    conf = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "linger.ms": 2,
        "message.timeout.ms": 300000,
        "retry.backoff.ms": 100,
        "error_cb": on_error,
    }
    conf.update(extra)
    producer = Producer(conf)
    n = 0
    start = time.time()
    last_flush = start
    while not stop.is_set():
        due = int((time.time() - start) * rate)
        while n < due and len(producer) < 20000:
            try:
                producer.produce(topic, value=b"%d" % n, partition=n % partitions, on_delivery=on_delivery)
            except BufferError:
                break
            n += 1
        producer.poll(0.005)
        if time.time() - last_flush > 0.2:
            with lock:
                out.flush()
            last_flush = time.time()
    left = producer.flush(120)
    with lock:
        out.write("DONE %s\n" % json.dumps({"sent": n, "unflushed": left, "config": extra}))
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
