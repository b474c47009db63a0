import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { AggregationTemporality, DataPointType, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/**
 * The gateway's own metric aggregates: cumulative sums, explicit-bucket histograms and gauges,
 * collected as the OpenTelemetry SDK's `ResourceMetrics` (so the Prometheus text and the OTLP
 * serializers read them unchanged). Why not the SDK's instruments: each of their `add`/`record`
 * calls hashes its attribute set (sorting its keys and JSON-encoding it) — about 7 µs of every
 * request with the seven points a request records. Here the caller names the series by a key it
 * builds from its bounded label values, and the attribute set is built once per series.
 *
 * Each metric keeps at most `limit` series; later ones are folded into one series with the
 * attribute `otel.metric.overflow: true`, as the SDK's cardinality limit does. The process's
 * metrics are cumulative from its start; a batch of forwarded records (records/forward-otlp.ts) is
 * one delta over the batch's time range.
 */

/** The SDK's enums, handed in by the caller (the SDK is loaded by dynamic import only). */
export interface Kinds {
  DataPointType: typeof DataPointType;
  AggregationTemporality: typeof AggregationTemporality;
}

const OVERFLOW_KEY = '\u0000overflow';
const OVERFLOW: Attributes = { 'otel.metric.overflow': true };

const hrNow = (): HrTime => {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
};

interface Described {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
}

/** Series by key, at most `limit` of them (then the overflow series). */
class SeriesMap<S> {
  readonly #series = new Map<string, { attributes: Attributes; s: S }>();
  constructor(
    private readonly limit: number,
    private readonly fresh: () => S,
  ) {}

  get(key: string, attrs: () => Attributes): S {
    const hit = this.#series.get(key);
    if (hit) return hit.s;
    const overflow = this.#series.size >= this.limit;
    const k = overflow ? OVERFLOW_KEY : key;
    const again = overflow ? this.#series.get(k) : undefined;
    if (again) return again.s;
    const entry = { attributes: overflow ? OVERFLOW : attrs(), s: this.fresh() };
    this.#series.set(k, entry);
    return entry.s;
  }

  entries(): IterableIterator<{ attributes: Attributes; s: S }> {
    return this.#series.values();
  }
}

/** How the points are reported: since the start (the process's metrics) or over one range (a forwarded batch). */
export type Temporality = 'cumulative' | 'delta';

const temporalityOf = (k: Kinds, t: Temporality): AggregationTemporality =>
  t === 'delta' ? k.AggregationTemporality.DELTA : k.AggregationTemporality.CUMULATIVE;

/** A monotonic sum (a counter). */
export class Sum {
  readonly #series: SeriesMap<{ value: number }>;
  constructor(
    readonly d: Described,
    limit: number,
    private readonly valueType: ValueType = ValueType.DOUBLE,
  ) {
    this.#series = new SeriesMap(limit, () => ({ value: 0 }));
  }

  add(value: number, key: string, attrs: () => Attributes): void {
    this.#series.get(key, attrs).value += value;
  }

  collect(k: Kinds, t: Temporality, start: HrTime, end: HrTime): MetricData {
    const dataPoints = [...this.#series.entries()].map(({ attributes, s }) => ({
      attributes,
      startTime: start,
      endTime: end,
      value: s.value,
    }));
    return {
      descriptor: { ...this.d, valueType: this.valueType },
      aggregationTemporality: temporalityOf(k, t),
      dataPointType: k.DataPointType.SUM,
      isMonotonic: true,
      dataPoints,
    };
  }
}

interface Buckets {
  counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

/** A histogram over explicit bucket boundaries (bucket i holds (b[i-1], b[i]]). */
export class Histogram {
  readonly #series: SeriesMap<Buckets>;
  constructor(
    readonly d: Described,
    readonly boundaries: readonly number[],
    limit: number,
  ) {
    this.#series = new SeriesMap(limit, () => ({
      counts: new Array<number>(boundaries.length + 1).fill(0),
      count: 0,
      sum: 0,
      min: Infinity,
      max: -Infinity,
    }));
  }

  record(value: number, key: string, attrs: () => Attributes): void {
    const b = this.#series.get(key, attrs);
    let i = 0;
    while (i < this.boundaries.length && value > (this.boundaries[i] as number)) i++;
    b.counts[i] = (b.counts[i] as number) + 1;
    b.count++;
    b.sum += value;
    if (value < b.min) b.min = value;
    if (value > b.max) b.max = value;
  }

  collect(k: Kinds, t: Temporality, start: HrTime, end: HrTime): MetricData {
    const dataPoints = [...this.#series.entries()].map(({ attributes, s }) => ({
      attributes,
      startTime: start,
      endTime: end,
      value: { buckets: { boundaries: [...this.boundaries], counts: [...s.counts] }, count: s.count, sum: s.sum, min: s.min, max: s.max },
    }));
    return {
      descriptor: { ...this.d, valueType: ValueType.DOUBLE },
      aggregationTemporality: temporalityOf(k, t),
      dataPointType: k.DataPointType.HISTOGRAM,
      dataPoints,
    };
  }
}

/** A gauge read at collection time. */
export interface Gauge {
  d: Described;
  read(observe: (value: number, attributes?: Attributes) => void): void;
}

export interface AggregatesOptions {
  /** Default cumulative, from construction. */
  temporality?: Temporality;
  /** The points' start time (default: now). */
  start?: HrTime;
}

/** A set of metrics, collected as one `ResourceMetrics` (metrics without a point are left out). */
export class Aggregates {
  readonly #sums: Sum[] = [];
  readonly #histograms: Histogram[] = [];
  readonly #gauges: Gauge[] = [];
  /** Counters whose totals are kept by their source and read at collection time. */
  readonly #observed: Gauge[] = [];
  readonly #start: HrTime;
  readonly #temporality: Temporality;

  constructor(
    private readonly kinds: Kinds,
    private readonly resource: Resource,
    private readonly scope: { name: string; version: string },
    private readonly limit: number,
    o: AggregatesOptions = {},
  ) {
    this.#start = o.start ?? hrNow();
    this.#temporality = o.temporality ?? 'cumulative';
  }

  sum(name: string, description: string, unit = '', valueType: ValueType = ValueType.DOUBLE): Sum {
    const s = new Sum({ name, description, unit }, this.limit, valueType);
    this.#sums.push(s);
    return s;
  }

  histogram(name: string, unit: string, description: string, boundaries: readonly number[]): Histogram {
    const h = new Histogram({ name, description, unit }, boundaries, this.limit);
    this.#histograms.push(h);
    return h;
  }

  gauge(name: string, description: string, read: Gauge['read']): void {
    this.#gauges.push({ d: { name, description, unit: '' }, read });
  }

  /** A monotonic counter whose cumulative totals `read` observes at collection time. */
  observedCounter(name: string, description: string, read: Gauge['read']): void {
    this.#observed.push({ d: { name, description, unit: '' }, read });
  }

  /** The points now (`end`: the end of their range, default now). */
  collect(end: HrTime = hrNow()): ResourceMetrics {
    const k = this.kinds;
    const t = this.#temporality;
    const metrics: MetricData[] = [
      ...this.#sums.map((s) => s.collect(k, t, this.#start, end)),
      ...this.#histograms.map((h) => h.collect(k, t, this.#start, end)),
    ].filter((m) => m.dataPoints.length > 0);
    for (const g of this.#gauges) {
      const dataPoints: { attributes: Attributes; startTime: HrTime; endTime: HrTime; value: number }[] = [];
      g.read((value, attributes = {}) => dataPoints.push({ attributes, startTime: end, endTime: end, value }));
      if (dataPoints.length > 0)
        metrics.push({
          descriptor: { ...g.d, valueType: ValueType.DOUBLE },
          aggregationTemporality: k.AggregationTemporality.CUMULATIVE,
          dataPointType: k.DataPointType.GAUGE,
          dataPoints,
        });
    }
    for (const g of this.#observed) {
      const dataPoints: { attributes: Attributes; startTime: HrTime; endTime: HrTime; value: number }[] = [];
      g.read((value, attributes = {}) => dataPoints.push({ attributes, startTime: this.#start, endTime: end, value }));
      if (dataPoints.length > 0)
        metrics.push({
          descriptor: { ...g.d, valueType: ValueType.DOUBLE },
          aggregationTemporality: k.AggregationTemporality.CUMULATIVE,
          dataPointType: k.DataPointType.SUM,
          isMonotonic: true,
          dataPoints,
        });
    }
    return { resource: this.resource, scopeMetrics: [{ scope: this.scope, metrics }] };
  }
}
