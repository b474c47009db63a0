import { expect, test } from 'bun:test';
import { JsonMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import { Aggregates } from './aggregate.ts';
import { renderPrometheus } from './prometheus.ts';

const kinds = { AggregationTemporality, DataPointType };
const fresh = (limit = 10) =>
  new Aggregates(kinds, resourceFromAttributes({ 'service.name': 't' }), { name: 'ai-gateway', version: '1' }, limit);

test('a histogram places a value in the first bucket whose bound it does not exceed, and keeps count, sum, min and max', () => {
  const agg = fresh();
  const h = agg.histogram('h', 's', 'a histogram', [1, 2, 4]);
  let built = 0;
  const attrs = () => {
    built++;
    return { a: 'x' };
  };
  for (const v of [0.5, 1, 1.5, 2, 3, 4, 9]) h.record(v, 'x', attrs);
  expect(built).toBe(1);
  const [m] = agg.collect().scopeMetrics[0]?.metrics ?? [];
  expect(m?.dataPointType).toBe(DataPointType.HISTOGRAM);
  if (m?.dataPointType !== DataPointType.HISTOGRAM) throw new Error('not a histogram');
  const p = m.dataPoints[0];
  expect(p?.attributes).toEqual({ a: 'x' });
  expect(p?.value.buckets).toEqual({ boundaries: [1, 2, 4], counts: [2, 2, 2, 1] });
  expect([p?.value.count, p?.value.sum, p?.value.min, p?.value.max]).toEqual([7, 21, 0.5, 9]);
});

test('sums add per series; past the limit every new series is one overflow series', () => {
  const agg = fresh(2);
  const c = agg.sum('gateway.requests', 'requests');
  c.add(1, 'a', () => ({ k: 'a' }));
  c.add(2, 'a', () => ({ k: 'a' }));
  c.add(1, 'b', () => ({ k: 'b' }));
  c.add(5, 'c', () => ({ k: 'c' }));
  c.add(5, 'd', () => ({ k: 'd' }));
  const text = renderPrometheus(agg.collect(), DataPointType);
  expect(text).toContain('gateway_requests_total{k="a"} 3');
  expect(text).toContain('gateway_requests_total{k="b"} 1');
  expect(text).toContain('gateway_requests_total{otel_metric_overflow="true"} 10');
  expect(text).not.toContain('k="c"');
});

test('gauges are read at collection; the collection serializes as an OTLP request with cumulative temporality', () => {
  const agg = fresh();
  let queued = 3;
  agg.gauge('gateway.records.queued', 'queued', (observe) => observe(queued));
  agg.sum('gateway.cost', 'cost', 'USD').add(0.25, 'p', () => ({ project: 'p' }));
  queued = 7;
  const body = new TextDecoder().decode(JsonMetricsSerializer.serializeRequest(agg.collect()));
  const req = JSON.parse(body) as {
    resourceMetrics: {
      scopeMetrics: {
        metrics: {
          name: string;
          sum?: { aggregationTemporality: number; isMonotonic: boolean; dataPoints: { asDouble: number }[] };
          gauge?: { dataPoints: { asDouble: number }[] };
        }[];
      }[];
    }[];
  };
  const metrics = req.resourceMetrics[0]?.scopeMetrics[0]?.metrics ?? [];
  const cost = metrics.find((m) => m.name === 'gateway.cost');
  expect(cost?.sum?.aggregationTemporality).toBe(2);
  expect(cost?.sum?.isMonotonic).toBe(true);
  expect(cost?.sum?.dataPoints[0]?.asDouble).toBe(0.25);
  expect(metrics.find((m) => m.name === 'gateway.records.queued')?.gauge?.dataPoints[0]?.asDouble).toBe(7);
});
