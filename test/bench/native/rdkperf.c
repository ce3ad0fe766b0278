/*
 * rdkperf: the benches' native measurement client (librdkafka, Debian's librdkafka-dev).
 * Built by test/bench/native.mjs into a temporary directory for each bench run; never committed
 * as a binary.
 *
 *   rdkperf produce -b HOST:PORT -t TOPIC -n N [-s BYTES] [-p PARTITION] [-r RECORDS_PER_S]
 *                   [-X key=value ...]
 *   rdkperf consume -b HOST:PORT -t TOPIC -n N [-p PARTITION] [-X key=value ...]
 *   rdkperf consume -b HOST:PORT -t TOPIC -n N -g GROUP [-i IDLE_MS] [-X key=value ...]
 *
 * -P COUNT spreads the records round robin over partitions PARTITION .. PARTITION+COUNT-1 (the
 * many-partition bench: every partition gets data, every request carries COUNT of them).
 * -g makes the consumer a member of GROUP (subscribe, the group's assignment, auto commit on):
 * it stops at N records, or once nothing has arrived for IDLE_MS (default 3000) after its first
 * record, since a member cannot know its share; first_ms and last_ms (wall clock, ms since the
 * epoch) let the bench add several members' records over their common span.
 *
 * Unlike kcat it formats nothing per record: produce sends one fixed payload (the record number
 * in its first bytes) and times each record from rd_kafka_produce to its delivery report;
 * consume counts records and bytes. With -r the producer paces itself (records sent by a clock,
 * not as fast as the queue takes them), so the latencies are those of a fixed offered rate.
 * Prints one line of JSON on stdout: records, bytes, ms, records_per_s, first_ms and last_ms (the
 * measured span on the wall clock), and for produce the latency percentiles in ms (p50, p95, p99,
 * p999, max) and the count of failed deliveries.
 */
#define _POSIX_C_SOURCE 200809L
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "rdkperf: %s: %s\n", what, why);
  exit(2);
}

/* Latency of record i in microseconds, written by the delivery report callback. */
static int64_t *sent_ns;
static uint32_t *latency_us;
static long delivered, failed;
static char first_error[512];

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  long i = (long)(intptr_t)m->_private;
  if (m->err) {
    if (failed++ == 0) snprintf(first_error, sizeof first_error, "%s", rd_kafka_err2str(m->err));
    latency_us[i] = UINT32_MAX;
  } else {
    int64_t us = (now_ns() - sent_ns[i]) / 1000;
    latency_us[i] = us > (int64_t)UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)us;
  }
  delivered++;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(const uint32_t *sorted, long n, double q) {
  if (n == 0) return 0;
  long i = (long)(q * (double)(n - 1) + 0.5);
  return sorted[i] / 1000.0;
}

static void set(rd_kafka_conf_t *conf, const char *kv) {
  char key[256], err[512];
  const char *eq = strchr(kv, '=');
  if (eq == NULL || (size_t)(eq - kv) >= sizeof key) die("bad -X (key=value)", kv);
  memcpy(key, kv, (size_t)(eq - kv));
  key[eq - kv] = 0;
  if (rd_kafka_conf_set(conf, key, eq + 1, err, sizeof err) != RD_KAFKA_CONF_OK) die(key, err);
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage", "rdkperf produce|consume -b HOST:PORT -t TOPIC -n N [-s BYTES] [-p PARTITION] [-r RATE] [-X k=v]");
  int produce = strcmp(argv[1], "produce") == 0;
  if (!produce && strcmp(argv[1], "consume") != 0) die("mode", argv[1]);
  const char *brokers = NULL, *topic = NULL;
  long n = 0, size = 100, rate = 0, idle_ms = 3000;
  int partition = 0, spread = 1;
  const char *group = NULL;
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  char err[512];
  /* Throughput defaults the benches share with their kcat runs; -X overrides any of them. */
  if (produce) {
    set(conf, "linger.ms=5");
    set(conf, "batch.size=1000000");
    set(conf, "queue.buffering.max.kbytes=1048576");
    set(conf, "queue.buffering.max.messages=2000000");
    set(conf, "message.timeout.ms=120000");
  } else {
    set(conf, "group.id=rdkperf");
    set(conf, "enable.auto.commit=false");
    set(conf, "fetch.message.max.bytes=10485760");
    set(conf, "enable.partition.eof=true");
  }
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) die("missing value for", a);
    const char *v = argv[++i];
    if (strcmp(a, "-b") == 0) brokers = v;
    else if (strcmp(a, "-t") == 0) topic = v;
    else if (strcmp(a, "-n") == 0) n = atol(v);
    else if (strcmp(a, "-s") == 0) size = atol(v);
    else if (strcmp(a, "-p") == 0) partition = atoi(v);
    else if (strcmp(a, "-r") == 0) rate = atol(v);
    else if (strcmp(a, "-P") == 0) spread = atoi(v);
    else if (strcmp(a, "-g") == 0) {
      group = v;
      set(conf, "enable.auto.commit=true"); /* a later -X may turn it off */
    }
    else if (strcmp(a, "-i") == 0) idle_ms = atol(v);
    else if (strcmp(a, "-X") == 0) set(conf, v);
    else die("unknown option", a);
  }
  if (brokers == NULL || topic == NULL || n <= 0) die("usage", "-b, -t and -n are required");
  if (spread < 1) die("-P", "must be at least 1");
  if (group != NULL) {
    if (rd_kafka_conf_set(conf, "group.id", group, err, sizeof err) != RD_KAFKA_CONF_OK) die("group.id", err);
  }
  if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, sizeof err) != RD_KAFKA_CONF_OK) die("bootstrap.servers", err);

  if (produce) {
    sent_ns = calloc((size_t)n, sizeof *sent_ns);
    latency_us = calloc((size_t)n, sizeof *latency_us);
    char *payload = malloc((size_t)size + 1);
    if (sent_ns == NULL || latency_us == NULL || payload == NULL) die("malloc", "out of memory");
    memset(payload, 'x', (size_t)size);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL) die("rd_kafka_new", err);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    /* Metadata and the connection before the clock starts, as the JVM perf tools do. */
    const struct rd_kafka_metadata *md;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) die("metadata", topic);
    rd_kafka_metadata_destroy(md);
    struct timespec wall0;
    clock_gettime(CLOCK_REALTIME, &wall0);
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
      if (rate > 0) {
        int64_t due = t0 + (int64_t)((double)i * 1e9 / (double)rate);
        for (;;) {
          int64_t t = now_ns();
          if (t >= due) break;
          /* Serve delivery reports while waiting, so they are timed when they arrive. */
          int ms = (int)((due - t) / 1000000);
          rd_kafka_poll(rk, ms > 0 ? (ms > 5 ? 5 : ms) : 0);
          if (ms == 0) break;
        }
      }
      int w = snprintf(payload, (size_t)size + 1, "%ld-", i);
      if (w < size) payload[w] = 'x';
      sent_ns[i] = now_ns();
      while (rd_kafka_produce(rkt, partition + (int)(i % spread), RD_KAFKA_MSG_F_COPY, payload, (size_t)size, NULL, 0, (void *)(intptr_t)i) != 0) {
        if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce", rd_kafka_err2str(rd_kafka_last_error()));
        rd_kafka_poll(rk, 1);
        sent_ns[i] = now_ns();
      }
      rd_kafka_poll(rk, 0);
    }
    while (delivered < n) rd_kafka_poll(rk, 50);
    double ms = (double)(now_ns() - t0) / 1e6;
    double wall0_ms = (double)wall0.tv_sec * 1e3 + (double)wall0.tv_nsec / 1e6;
    qsort(latency_us, (size_t)n, sizeof *latency_us, cmp_u32);
    long ok = n - failed;
    printf("{\"mode\":\"produce\",\"records\":%ld,\"bytes\":%ld,\"ms\":%.1f,\"records_per_s\":%.0f,\"rate\":%ld,"
           "\"p50_ms\":%.3f,\"p95_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"failed\":%ld,\"error\":\"%s\",\"first_ms\":%.3f,\"last_ms\":%.3f}\n",
           n, n * size, ms, (double)n / (ms / 1000), rate, pct(latency_us, ok, 0.50), pct(latency_us, ok, 0.95),
           pct(latency_us, ok, 0.99), pct(latency_us, ok, 0.999), ok > 0 ? latency_us[ok - 1] / 1000.0 : 0, failed, first_error,
           wall0_ms, wall0_ms + ms);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return failed == 0 ? 0 : 1;
  }

  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == NULL) die("rd_kafka_new", err);
  rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
  if (group != NULL) {
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_add(parts, topic, RD_KAFKA_PARTITION_UA);
    if (rd_kafka_subscribe(rk, parts) != RD_KAFKA_RESP_ERR_NO_ERROR) die("subscribe", topic);
  } else {
    rd_kafka_topic_partition_list_add(parts, topic, partition)->offset = RD_KAFKA_OFFSET_BEGINNING;
    if (rd_kafka_assign(rk, parts) != RD_KAFKA_RESP_ERR_NO_ERROR) die("assign", topic);
  }
  rd_kafka_topic_partition_list_destroy(parts);
  long got = 0, bytes = 0;
  int64_t t0 = 0, t_last = 0;
  struct timespec wall0;
  clock_gettime(CLOCK_REALTIME, &wall0);
  int64_t mono0 = now_ns();
  int64_t give_up = now_ns() + 120LL * 1000000000;
  while (got < n) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (m == NULL) {
      if (now_ns() > give_up) break;
      if (group != NULL && got > 0 && now_ns() - t_last > idle_ms * 1000000LL) break;
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      /* The clock starts at the first record: start-up and metadata are not the broker's speed. */
      if (got == 0) t0 = now_ns();
      t_last = now_ns();
      got++;
      bytes += (long)m->len;
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      die("consume", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  /* Without -g the span ends at the last record too (the loop ends on it). */
  double ms = t0 == 0 ? 0 : (double)(t_last - t0) / 1e6;
  double wall0_ms = (double)wall0.tv_sec * 1e3 + (double)wall0.tv_nsec / 1e6;
  printf("{\"mode\":\"consume\",\"records\":%ld,\"bytes\":%ld,\"ms\":%.1f,\"records_per_s\":%.0f,\"first_ms\":%.3f,\"last_ms\":%.3f}\n",
         got, bytes, ms, ms > 0 ? (double)got / (ms / 1000) : 0, wall0_ms + (double)(t0 - mono0) / 1e6,
         wall0_ms + (double)(t_last - mono0) / 1e6);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got == n || (group != NULL && got > 0) ? 0 : 1;
}
