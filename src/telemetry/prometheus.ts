import type { Attributes } from '@opentelemetry/api';
import type { DataPointType, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/**
 * Prometheus text exposition (format 0.0.4) of what the OpenTelemetry SDK collected, named as the
 * OTel Prometheus exporter names them: dots become underscores, the unit is a suffix (`s` →
 * `_seconds`, `USD` → `_usd`, `{…}` and `1` dropped), counters end in `_total`.
 */

/** The SDK's DataPointType enum, handed in by the caller (the SDK is loaded by dynamic import only). */
type Kinds = typeof DataPointType;

const UNIT_SUFFIX: Readonly<Record<string, string>> = { s: 'seconds', ms: 'milliseconds', By: 'bytes', USD: 'usd' };

const sanitize = (s: string): string => s.replace(/[^a-zA-Z0-9_:]/g, '_');

export const prometheusName = (m: MetricData, k: Kinds): string => {
  let name = sanitize(m.descriptor.name);
  const suffix = UNIT_SUFFIX[m.descriptor.unit];
  if (suffix && !name.endsWith(`_${suffix}`)) name += `_${suffix}`;
  if (m.dataPointType === k.SUM && m.isMonotonic && !name.endsWith('_total')) name += '_total';
  return name;
};

const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

const labels = (attrs: Attributes, extra?: string): string => {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) parts.push(`${sanitize(k)}="${escapeValue(String(v))}"`);
  if (extra) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
};

const num = (n: number): string => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN');

const renderMetric = (m: MetricData, k: Kinds, out: string[]): void => {
  const name = prometheusName(m, k);
  const type = m.dataPointType === k.HISTOGRAM ? 'histogram' : m.dataPointType === k.SUM && m.isMonotonic ? 'counter' : 'gauge';
  if (m.descriptor.description) out.push(`# HELP ${name} ${m.descriptor.description.replace(/\n/g, ' ')}`);
  out.push(`# TYPE ${name} ${type}`);
  if (m.dataPointType === k.HISTOGRAM) {
    for (const p of m.dataPoints) {
      const { boundaries, counts } = p.value.buckets;
      let cumulative = 0;
      for (let i = 0; i < counts.length; i++) {
        cumulative += counts[i] ?? 0;
        const le = i < boundaries.length ? num(boundaries[i] ?? 0) : '+Inf';
        out.push(`${name}_bucket${labels(p.attributes, `le="${le}"`)} ${cumulative}`);
      }
      out.push(`${name}_sum${labels(p.attributes)} ${num(p.value.sum ?? 0)}`);
      out.push(`${name}_count${labels(p.attributes)} ${p.value.count}`);
    }
    return;
  }
  if (m.dataPointType === k.SUM || m.dataPointType === k.GAUGE)
    for (const p of m.dataPoints) out.push(`${name}${labels(p.attributes)} ${num(p.value)}`);
};

export const renderPrometheus = (rm: ResourceMetrics, kinds: Kinds): string => {
  const out: string[] = [];
  for (const sm of rm.scopeMetrics) for (const m of sm.metrics) if (m.dataPoints.length > 0) renderMetric(m, kinds, out);
  return `${out.join('\n')}\n`;
};
