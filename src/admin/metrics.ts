// MetricsRegistry: counters, gauges and histograms with labels, rendered in Prometheus' text
// exposition format (version 0.0.4) for GET /metrics. No dependency: the format is a few lines.
//
// Two ways to feed it. Push: code that sees events holds a series (family.labels(...)) and bumps
// it; the series object is cached by the caller, so an event costs one addition. Pull: most of the
// broker's figures already live where they are kept (per-topic totals in the ReplicaManager,
// partition state, group offsets); a collector registered with onCollect() copies them into
// families just before each render, so the request paths pay nothing for them.
//
// Invariants: a family's label names are fixed when it is made, and every series gives a value for
// each; names follow Prometheus' rules (checked, a bad name is a programmer error); a family keeps
// at most metricsSeriesPerFamilyMax series (new label sets past it are dropped, not allocated);
// histogram buckets are cumulative and end with +Inf.

import { assert, metricsSeriesPerFamilyMax } from "../util/mod.ts";

const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

type Kind = "counter" | "gauge" | "histogram";

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** `{a="x",b="y"}` for the given names and values, or "" without labels. */
function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts = names.map((n, i) => `${n}="${escapeLabelValue(values[i])}"`);
  if (extra !== "") parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

/** A single value under one label set (counters and gauges). */
export class ValueSeries {
  value = 0;
  constructor(readonly labelValues: readonly string[]) {}

  inc(by = 1): void {
    this.value += by;
  }

  set(v: number): void {
    this.value = v;
  }
}

/** Bucket counts, sum and count under one label set. */
export class HistogramSeries {
  /** counts[i]: observations <= bounds[i] and > bounds[i-1]; the last slot is above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly labelValues: readonly string[], private readonly bounds: readonly number[]) {
    this.counts = new Array(bounds.length + 1).fill(0);
  }

  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}

abstract class Family<S extends { labelValues: readonly string[] }> {
  protected readonly series = new Map<string, S>();

  constructor(readonly name: string, readonly help: string, readonly kind: Kind, readonly labelNames: readonly string[]) {
    assert(metricNamePattern.test(name), `metric name ${name} follows Prometheus' rules`);
    for (const l of labelNames) assert(labelNamePattern.test(l) && l !== "le", `label name ${l} of ${name} is valid`);
  }

  protected abstract make(values: readonly string[]): S;

  /**
   * The series for these label values (one per label name, in order), made on first use. Past
   * metricsSeriesPerFamilyMax series a new label set gets a detached series that is never rendered.
   */
  labels(...values: string[]): S {
    assert(values.length === this.labelNames.length, `${this.name} takes ${this.labelNames.length} label values`);
    const key = values.join("\u0000");
    let s = this.series.get(key);
    if (s === undefined) {
      s = this.make(values);
      if (this.series.size < metricsSeriesPerFamilyMax) this.series.set(key, s);
    }
    return s;
  }

  /** Forgets every series (a collector that rebuilds the family each scrape starts here). */
  clear(): void {
    this.series.clear();
  }

  get size(): number {
    return this.series.size;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.kind}`);
    for (const s of this.series.values()) this.renderSeries(s, out);
  }

  protected abstract renderSeries(s: S, out: string[]): void;
}

/** A count that only goes up (its _total name says so); a collector may set it from a kept total. */
export class Counter extends Family<ValueSeries> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    assert(name.endsWith("_total"), `counter ${name} ends in _total`);
    super(name, help, "counter", labelNames);
  }

  protected make(values: readonly string[]): ValueSeries {
    return new ValueSeries(values);
  }

  protected renderSeries(s: ValueSeries, out: string[]): void {
    out.push(`${this.name}${labelText(this.labelNames, s.labelValues)} ${formatValue(s.value)}`);
  }
}

/** A value that goes up and down. */
export class Gauge extends Family<ValueSeries> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, "gauge", labelNames);
  }

  protected make(values: readonly string[]): ValueSeries {
    return new ValueSeries(values);
  }

  protected renderSeries(s: ValueSeries, out: string[]): void {
    out.push(`${this.name}${labelText(this.labelNames, s.labelValues)} ${formatValue(s.value)}`);
  }
}

/** Observations counted into buckets with upper bounds (`le`), plus their sum and count. */
export class Histogram extends Family<HistogramSeries> {
  readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]) {
    super(name, help, "histogram", labelNames);
    assert(bounds.length > 0 && bounds.every((b, i) => Number.isFinite(b) && (i === 0 || b > bounds[i - 1])), `${name}: finite bounds in increasing order`);
    this.bounds = [...bounds];
  }

  protected make(values: readonly string[]): HistogramSeries {
    return new HistogramSeries(values, this.bounds);
  }

  protected renderSeries(s: HistogramSeries, out: string[]): void {
    let cumulative = 0;
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += s.counts[i];
      const le = i < this.bounds.length ? formatValue(this.bounds[i]) : "+Inf";
      out.push(`${this.name}_bucket${labelText(this.labelNames, s.labelValues, `le="${le}"`)} ${cumulative}`);
    }
    const labels = labelText(this.labelNames, s.labelValues);
    out.push(`${this.name}_sum${labels} ${formatValue(s.sum)}`, `${this.name}_count${labels} ${s.count}`);
  }
}

export class MetricsRegistry {
  private readonly families = new Map<string, Family<ValueSeries | HistogramSeries>>();
  private readonly collectors: (() => void)[] = [];

  private add<F extends Family<ValueSeries | HistogramSeries>>(f: F): F {
    assert(!this.families.has(f.name), `metric ${f.name} is registered once`);
    this.families.set(f.name, f);
    return f;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, bounds));
  }

  /** Runs before every render, in registration order: pull-style figures are copied in here. */
  onCollect(collect: () => void): void {
    this.collectors.push(collect);
  }

  /** The text exposition: every family, HELP and TYPE first, one sample per line, ending in a newline. */
  render(): string {
    for (const c of this.collectors) c();
    const out: string[] = [];
    for (const f of this.families.values()) f.render(out);
    return out.join("\n") + "\n";
  }
}

/** The Content-Type of the text exposition format. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8";
