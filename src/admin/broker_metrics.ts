// BrokerMetrics: the figures GET /metrics reports, under the names Kafka's JMX exporter gives them
// (so existing Grafana dashboards and alerts work), plus process memory and event-loop delay.
//
//   kafka_server_brokertopicmetrics_messagesin_total{topic}   counter  records appended
//   kafka_server_brokertopicmetrics_bytesin_total{topic}      counter  batch bytes appended
//   kafka_server_brokertopicmetrics_bytesout_total{topic}     counter  record bytes fetched by consumers
//   kafka_server_replicamanager_underreplicatedpartitions    gauge    led here, ISR smaller than replicas
//   kafka_server_replicamanager_partitioncount / leadercount gauge
//   kafka_server_replicamanager_offlinereplicacount          gauge    replicas whose log dir failed
//   kafka_controller_kafkacontroller_activecontrollercount   gauge    1 on the active controller
//   kafka_controller_kafkacontroller_offlinepartitionscount  gauge    (controller only) partitions without a live leader
//   kafka_network_requestmetrics_requests_total{request,version}  counter
//   kafka_network_requestmetrics_totaltimems{request}        histogram  ms from decode to encoded answer
//   kafka_log_log_size / _logstartoffset / _logendoffset{topic,partition}  gauge  local replicas
//   kafka_consumergroup_lag{group,topic,partition}           gauge    high watermark - committed offset
//   kafka_log_logmanager_offlinelogdirectorycount            gauge    log dirs offline (failed)
//   strand_log_dir_usable_bytes / _total_bytes{dir}          gauge    the dir's volume at the last free-space check
//   strand_log_dir_appends_refused{dir}                      gauge    1 while appends are refused there (disk full or
//                                                                     below log.dir.min.free.bytes), else 0
//   strand_log_dir_transient_errors_total{dir,code}          counter  EMFILE/ENFILE/ENOMEM/ENOSPC/EDQUOT met (dir stays online)
//   strand_server_unserved_partitions                        gauge    partitions this broker should lead but cannot serve
//   kafka_server_socket_server_metrics_connection_count      gauge    connections open on the Kafka listeners
//   kafka_network_socketserver_memorypoolused / _memorypoolavailable  gauge  bytes of requests being read or
//                                                                     handled (queued.max.request.bytes), and what is left
//   strand_server_memory_pool_waiting                        gauge    connections not read until their frame fits the pool
//   strand_server_connections_throttled                      gauge    accepted connections waiting for max.connection.creation.rate
//   strand_server_connections_refused_total{reason}          counter  closed at accept: max.connections.per.ip, connection_creation_rate,
//                                                                     max.connections (or a listener's) once the slot queue is full
//   strand_server_connections_waiting_for_slot               gauge    accepted connections held for a slot under max.connections
//                                                                     or listener.name.<l>.max.connections
//   strand_server_connections_closed_over_max_total          counter  open connections closed because more were open than max.connections
//   kafka_server_produce_throttle_time{user,client_id}       gauge    ms of throttle the client's latest request got
//   kafka_server_fetch_throttle_time / _request_throttle_time          (client quotas: producer_byte_rate,
//                                                                     consumer_byte_rate, request_percentage)
//   kafka_server_produce_byte_rate / _fetch_byte_rate{user,client_id}  gauge  bytes/s as the quota measures them;
//   kafka_server_request_request_time{user,client_id}        gauge    handler time as a percentage (request quota)
//   strand_server_throttled_total{quota}                     counter  answers throttled, by quota type
//   kafka_server_authorizer_metrics_acls_total_count         gauge    ACLs the authorizer holds (none without one)
//   kafka_server_authorizer_metrics_authorization_request_total / _allowed_total / _denied_total
//                                                            counter  decisions (Kafka's authorization-*-rate-per-minute)
//   strand_server_throttle_time_ms_total{quota}              counter  ms of throttle given, by quota type
//                                                                     (per client only while it has a quota; at most
//                                                                     limits.metricsQuotaSeriesMax clients per type)
//   strand_txn_coordinator_transactions{state}               gauge    transactional ids this broker coordinates, by state
//   strand_open_transactions / strand_hanging_transactions   gauge    open transactions on partitions led here / those older
//                                                                     than transaction.max.timeout.ms (hold the LSO back)
//   process_resident_memory_bytes                            gauge
//   nodejs_eventloop_lag_seconds / nodejs_eventloop_lag_max_seconds  gauge  timer delay, latest / max over a minute
//
// Per-topic totals, partition state and group offsets are read at scrape time from where the
// broker keeps them (pull); only the per-request counter and histogram are pushed, by the
// dispatcher's RequestObserver, through series objects cached per (request, version). The
// metrics outlive a broker attached to them: counters keep counting across the admin server's
// life, and while no broker is attached only the process figures are reported.

import type { BrokerServices, ClientQuotas, NetworkStats, RequestObserver } from "../broker/mod.ts";
import type { Clock, Timer } from "../platform/mod.ts";
import { eventLoopSampleMs, eventLoopSamplesKept, metricsGroupLagSeriesMax, metricsQuotaSeriesMax } from "../util/mod.ts";
import { type HistogramSeries, MetricsRegistry, type ValueSeries } from "./metrics.ts";
import { groupOffsetsWithLag, transactionsView, unservedPartitions } from "./views.ts";

/** What the metrics read from a running broker (the Broker class has these). */
export interface MetricsTarget {
  services: BrokerServices;
  readonly isActiveController: boolean;
  networkStats?(): NetworkStats;
  readonly clientQuotas?: ClientQuotas | null;
}

/** Upper bounds, in ms, of the request latency buckets (Kafka's TotalTimeMs). */
export const requestLatencyBucketsMs = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

export interface ProcessFigures {
  memoryRssBytes(): number;
}

export class BrokerMetrics {
  readonly registry = new MetricsRegistry();
  private target: MetricsTarget | null = null;
  private readonly perRequest = new Map<string, { count: ValueSeries; time: HistogramSeries }>();
  private lagSampler: Timer | null = null;
  private readonly lagSamplesMs: number[] = [];

  readonly requestObserver: RequestObserver;

  constructor(private readonly clock: Clock, process: ProcessFigures) {
    const r = this.registry;
    const messagesIn = r.counter("kafka_server_brokertopicmetrics_messagesin_total", "Records appended to the topic's partitions on this broker.", ["topic"]);
    const bytesIn = r.counter("kafka_server_brokertopicmetrics_bytesin_total", "Record batch bytes appended to the topic's partitions on this broker.", ["topic"]);
    const bytesOut = r.counter("kafka_server_brokertopicmetrics_bytesout_total", "Record bytes fetched from the topic by consumers on this broker.", ["topic"]);
    const underReplicated = r.gauge("kafka_server_replicamanager_underreplicatedpartitions", "Partitions led by this broker whose ISR is smaller than their replica set.");
    const partitionCount = r.gauge("kafka_server_replicamanager_partitioncount", "Partitions this broker holds a replica of.");
    const leaderCount = r.gauge("kafka_server_replicamanager_leadercount", "Partitions this broker leads.");
    const offlineReplicas = r.gauge("kafka_server_replicamanager_offlinereplicacount", "Replicas on this broker whose log dir has failed.");
    const fetchSessions = r.gauge("kafka_server_fetchsessioncache_numincrementalfetchsessions", "Incremental fetch sessions held (KIP-227).");
    const fetchSessionPartitions = r.gauge("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached", "Partitions in all incremental fetch sessions held.");
    const fetchSessionEvictions = r.counter("kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total", "Fetch sessions evicted to make room for new ones.");
    const activeController = r.gauge("kafka_controller_kafkacontroller_activecontrollercount", "1 when this broker is the active controller, else 0.");
    const offlinePartitions = r.gauge("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a live leader (reported by the active controller only).");
    const requests = r.counter("kafka_network_requestmetrics_requests_total", "Requests answered, by API and version.", ["request", "version"]);
    const totalTime = r.histogram(
      "kafka_network_requestmetrics_totaltimems",
      "Milliseconds from a decoded request to its encoded answer, by API.",
      ["request"],
      requestLatencyBucketsMs,
    );
    const logSize = r.gauge("kafka_log_log_size", "Bytes of the partition's log segments on this broker.", ["topic", "partition"]);
    const logStart = r.gauge("kafka_log_log_logstartoffset", "The partition's log start offset on this broker.", ["topic", "partition"]);
    const logEnd = r.gauge("kafka_log_log_logendoffset", "The partition's log end offset on this broker.", ["topic", "partition"]);
    const groupLag = r.gauge("kafka_consumergroup_lag", "High watermark minus the group's committed offset, for partitions led by this broker.", ["group", "topic", "partition"]);
    const offlineDirs = r.gauge("kafka_log_logmanager_offlinelogdirectorycount", "Log dirs of this broker that failed and are offline.");
    const dirUsable = r.gauge("strand_log_dir_usable_bytes", "Usable bytes of the log dir's volume at the last free-space check.", ["dir"]);
    const dirTotal = r.gauge("strand_log_dir_total_bytes", "Size in bytes of the log dir's volume.", ["dir"]);
    const dirRefusing = r.gauge("strand_log_dir_appends_refused", "1 while appends to the log dir are refused for lack of space (ENOSPC or log.dir.min.free.bytes), else 0.", ["dir"]);
    const transientErrors = r.counter("strand_log_dir_transient_errors_total", "Resource and no-space errors (EMFILE, ENFILE, ENOMEM, ENOSPC, EDQUOT) met by file operations in the log dir.", ["dir", "code"]);
    const unserved = r.gauge("strand_server_unserved_partitions", "Partitions this broker should lead but cannot serve (failed log dir, log not opened).");
    const connections = r.gauge("kafka_server_socket_server_metrics_connection_count", "Connections open on the Kafka listeners.");
    const poolUsed = r.gauge("kafka_network_socketserver_memorypoolused", "Bytes of requests being read or handled, reserved from queued.max.request.bytes.");
    const poolAvailable = r.gauge("kafka_network_socketserver_memorypoolavailable", "Bytes left in queued.max.request.bytes (+Inf when unbounded).");
    const poolWaiting = r.gauge("strand_server_memory_pool_waiting", "Connections not read until their frame fits queued.max.request.bytes.");
    const throttled = r.gauge("strand_server_connections_throttled", "Accepted connections waiting their turn under max.connection.creation.rate.");
    const refused = r.counter("strand_server_connections_refused_total", "Connections closed at accept: by max.connections.per.ip, an ip's connection_creation_rate, or max.connections (a listener's) with the slot queue full.", ["reason"]);
    const waitingForSlot = r.gauge("strand_server_connections_waiting_for_slot", "Accepted connections held, unread, for a slot under max.connections or listener.name.<l>.max.connections.");
    const closedOverMax = r.counter("strand_server_connections_closed_over_max_total", "Open connections closed, least recently active first, because more were open than max.connections.");
    const throttleTime = {
      produce: r.gauge("kafka_server_produce_throttle_time", "Milliseconds of throttle the client's latest Produce got (producer_byte_rate).", ["user", "client_id"]),
      fetch: r.gauge("kafka_server_fetch_throttle_time", "Milliseconds of throttle the client's latest Fetch got (consumer_byte_rate).", ["user", "client_id"]),
      request: r.gauge("kafka_server_request_throttle_time", "Milliseconds of throttle the client's latest request got (request_percentage).", ["user", "client_id"]),
      controller_mutation: r.gauge("kafka_server_controllermutation_throttle_time", "Milliseconds of throttle the client's latest CreateTopics, CreatePartitions or DeleteTopics got (controller_mutation_rate).", ["user", "client_id"]),
    };
    const quotaRate = {
      produce: r.gauge("kafka_server_produce_byte_rate", "Bytes per second the client produced, as its quota measures them.", ["user", "client_id"]),
      fetch: r.gauge("kafka_server_fetch_byte_rate", "Bytes per second the client fetched, as its quota measures them.", ["user", "client_id"]),
      request: r.gauge("kafka_server_request_request_time", "Handler time of the client's requests as a percentage of one second, as its quota measures it.", ["user", "client_id"]),
      // Kafka's ControllerMutation sensor measures the token bucket ("tokens"), not a rate.
      controller_mutation: r.gauge("kafka_server_controllermutation_tokens", "Partition mutations left in the client's controller_mutation_rate token bucket (negative: owed).", ["user", "client_id"]),
    };
    const throttledAnswers = r.counter("strand_server_throttled_total", "Answers throttled by a client quota, by quota type.", ["quota"]);
    const throttleTotal = r.counter("strand_server_throttle_time_ms_total", "Milliseconds of throttle given by client quotas, by quota type.", ["quota"]);
    const txnStates = r.gauge("strand_txn_coordinator_transactions", "Transactional ids this broker's transaction coordinator holds, by state.", ["state"]);
    const openTxns = r.gauge("strand_open_transactions", "Open transactions (producers with an ongoing transaction) on partitions this broker leads.");
    const hangingTxns = r.gauge("strand_hanging_transactions", "Open transactions on partitions led here older than transaction.max.timeout.ms: they hold the last stable offset back.");
    // Kafka's kafka.server:type=authorizer-metrics (acls-total-count, and the authorization-*-rate-per-minute
    // meters as counters, as the other meters here: rate() gives the rate).
    const aclsTotal = r.gauge("kafka_server_authorizer_metrics_acls_total_count", "ACLs the authorizer holds.");
    const authRequests = r.counter("kafka_server_authorizer_metrics_authorization_request_total", "Authorization decisions made (authorization-request-rate-per-minute).");
    const authAllowed = r.counter("kafka_server_authorizer_metrics_authorization_allowed_total", "Authorization decisions that allowed (authorization-allowed-rate-per-minute).");
    const authDenied = r.counter("kafka_server_authorizer_metrics_authorization_denied_total", "Authorization decisions that denied (authorization-denied-rate-per-minute).");
    const rss = r.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
    const loopLag = r.gauge("nodejs_eventloop_lag_seconds", "How late the latest event-loop timer sample fired, in seconds.");
    const loopLagMax = r.gauge("nodejs_eventloop_lag_max_seconds", "The largest event-loop timer delay over the last minute, in seconds.");

    this.requestObserver = {
      monotonicMs: () => clock.monotonicMs(),
      requestDone: (apiName, apiVersion, elapsedMs) => {
        const key = `${apiName}/${apiVersion}`;
        let s = this.perRequest.get(key);
        if (s === undefined) {
          s = { count: requests.labels(apiName, String(apiVersion)), time: totalTime.labels(apiName) };
          this.perRequest.set(key, s);
        }
        s.count.inc();
        s.time.observe(elapsedMs);
      },
    };

    r.onCollect(() => {
      rss.labels().set(process.memoryRssBytes());
      const n = this.lagSamplesMs.length;
      loopLag.labels().set(n === 0 ? 0 : this.lagSamplesMs[n - 1] / 1000);
      loopLagMax.labels().set(n === 0 ? 0 : Math.max(...this.lagSamplesMs) / 1000);
      for (const f of [messagesIn, bytesIn, bytesOut, logSize, logStart, logEnd, groupLag]) f.clear();
      for (const f of [underReplicated, partitionCount, leaderCount, offlineReplicas, activeController, offlinePartitions]) f.clear();
      for (const f of [fetchSessions, fetchSessionPartitions, fetchSessionEvictions]) f.clear();
      for (const f of [offlineDirs, dirUsable, dirTotal, dirRefusing, transientErrors, unserved]) f.clear();
      for (const f of [connections, poolUsed, poolAvailable, poolWaiting, throttled, refused]) f.clear();
      const t = this.target;
      if (t === null) return;
      const net = t.networkStats?.();
      if (net !== undefined) {
        connections.labels().set(net.connections);
        poolUsed.labels().set(net.poolReservedBytes);
        poolAvailable.labels().set(net.poolCapacityBytes - net.poolReservedBytes);
        poolWaiting.labels().set(net.poolWaiting);
        throttled.labels().set(net.connectionsThrottled);
        for (const [reason, n] of net.refusedTotal) refused.labels(reason).set(n);
        waitingForSlot.labels().set(net.connectionsWaitingForSlot);
        closedOverMax.labels().set(net.closedOverMaxConnectionsTotal);
      }
      // Clients whose sensor expired (an hour idle) leave the report.
      for (const g of [...Object.values(throttleTime), ...Object.values(quotaRate)]) g.clear();
      for (const m of t.clientQuotas?.managers ?? []) {
        throttledAnswers.labels(m.type).set(m.throttledTotal);
        throttleTotal.labels(m.type).set(m.throttleTimeMsTotal);
        for (const q of m.stats().slice(0, metricsQuotaSeriesMax)) {
          throttleTime[m.type].labels(q.user, q.clientId).set(q.lastThrottleTimeMs);
          quotaRate[m.type].labels(q.user, q.clientId).set(q.tokens ?? q.rate);
        }
      }
      const s = t.services;
      for (const f of [aclsTotal, authRequests, authAllowed, authDenied]) f.clear();
      const auth = s.authorizer?.metrics?.();
      if (auth !== undefined) {
        aclsTotal.labels().set(auth.aclsTotal);
        authRequests.labels().set(auth.allowedTotal + auth.deniedTotal);
        authAllowed.labels().set(auth.allowedTotal);
        authDenied.labels().set(auth.deniedTotal);
      }
      for (const [topic, c] of s.replicaManager.topicStats.entries()) {
        messagesIn.labels(topic).set(c.messagesIn);
        bytesIn.labels(topic).set(c.bytesIn);
        bytesOut.labels(topic).set(c.bytesOut);
      }
      let under = 0, leaders = 0, all = 0, offline = 0;
      for (const p of s.replicaManager.allPartitions()) {
        all++;
        if (s.replicaManager.isOffline(p.topic, p.partition)) {
          offline++;
          continue;
        }
        if (p.isLeader) {
          leaders++;
          if (p.state.isr.length < p.state.replicas.length) under++;
        }
        const part = String(p.partition);
        logSize.labels(p.topic, part).set(p.log.sizeBytes);
        logStart.labels(p.topic, part).set(p.log.logStartOffset);
        logEnd.labels(p.topic, part).set(p.log.logEndOffset);
      }
      underReplicated.labels().set(under);
      partitionCount.labels().set(all);
      leaderCount.labels().set(leaders);
      offlineReplicas.labels().set(offline);
      if (s.fetchSessions) {
        fetchSessions.labels().set(s.fetchSessions.size);
        fetchSessionPartitions.labels().set(s.fetchSessions.partitionCount);
        fetchSessionEvictions.labels().set(s.fetchSessions.evictions);
      }
      activeController.labels().set(t.isActiveController ? 1 : 0);
      if (t.isActiveController) offlinePartitions.labels().set(countOfflinePartitions(s));
      this.collectGroupLag(s, (group, topic, partition, lag) => groupLag.labels(group, topic, String(partition)).set(lag));
      offlineDirs.labels().set(s.logManager.offlineLogDirs.length);
      for (const { dir, state } of s.logManager.spaceStates()) {
        dirUsable.labels(dir).set(Math.max(0, state.usableBytes));
        if (state.totalBytes >= 0) dirTotal.labels(dir).set(state.totalBytes);
        dirRefusing.labels(dir).set(state.refusal === null ? 0 : 1);
      }
      for (const [key, n] of s.logManager.transientErrorCounts) {
        const [dir, code] = key.split("\t");
        transientErrors.labels(dir, code).set(n);
      }
      unserved.labels().set(unservedPartitions(s).length);
      txnStates.clear();
      const txns = transactionsView(s);
      const byState = new Map<string, number>();
      for (const t of txns.coordinator) byState.set(t.state, (byState.get(t.state) ?? 0) + 1);
      for (const [state, n] of byState) txnStates.labels(state).set(n);
      openTxns.labels().set(txns.open_on_partitions.length);
      hangingTxns.labels().set(txns.hanging);
    });
  }

  /** The broker whose figures to report from now on (null: none, while it starts or stops). */
  attach(target: MetricsTarget | null): void {
    this.target = target;
  }

  /** Starts sampling the event-loop delay: a timer re-armed each time, late by however long the loop was busy. */
  start(): void {
    if (this.lagSampler !== null) return;
    const arm = () => {
      const armedAt = this.clock.monotonicMs();
      this.lagSampler = this.clock.setTimeout(() => {
        const lateMs = Math.max(0, this.clock.monotonicMs() - armedAt - eventLoopSampleMs);
        this.lagSamplesMs.push(lateMs);
        if (this.lagSamplesMs.length > eventLoopSamplesKept) this.lagSamplesMs.shift();
        arm();
      }, eventLoopSampleMs);
    };
    arm();
  }

  stop(): void {
    this.lagSampler?.cancel();
    this.lagSampler = null;
  }

  render(): string {
    return this.registry.render();
  }

  private collectGroupLag(s: BrokerServices, emit: (group: string, topic: string, partition: number, lag: number) => void): void {
    let series = 0;
    for (const g of s.coordinator.listGroups([])) {
      for (const o of groupOffsetsWithLag(s, g.groupId)) {
        if (o.lag === null) continue;
        if (series++ >= metricsGroupLagSeriesMax) return;
        emit(g.groupId, o.topic, o.partition, o.lag);
      }
    }
  }
}

/** Partitions whose leader is none or not a live broker, as the metadata shows them. */
function countOfflinePartitions(s: BrokerServices): number {
  let n = 0;
  for (const name of s.metadata.topicNames()) {
    for (const p of s.metadata.getTopic(name)?.partitions ?? []) {
      if (p.leader < 0 || s.metadata.getBroker(p.leader) === undefined) n++;
    }
  }
  return n;
}
