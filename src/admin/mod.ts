// admin: the operator's HTTP interface. A Hono app (app.ts) with the REST API under /v1 and
// Prometheus metrics at /metrics (metrics.ts: the registry and text format; broker_metrics.ts: the
// figures, under Kafka's JMX-exporter names) and the dashboard page at / (dashboard/: its HTML,
// CSS and script as strings, so the executable embeds them), served on admin.listeners by
// AdminServer (server.ts) through platform.http.
//
// Invariants: the API reads and changes the broker only through its services (the same code
// paths as the Kafka APIs: TopicAdmin, ConfigAdmin, the coordinator); mutating routes need the
// bearer token, or a loopback-only listener; the request paths pay for metrics with one counter
// bump and one histogram observation per request, the rest is read at scrape time.
export * from "./app.ts";
export * from "./broker_metrics.ts";
export * from "./metrics.ts";
export * from "./server.ts";
export * from "./views.ts";
