/** Small statistics helpers shared by the runner and the report. */

export const median = (xs: readonly number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Median of every numeric field over rounds (non-numeric fields from the first round). */
export const medianOf = <T extends object>(rounds: readonly T[]): T => {
  const first = rounds[0];
  if (!first) throw new Error('no rounds');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(first)) {
    out[k] = typeof v === 'number' ? median(rounds.map((r) => (r as Record<string, unknown>)[k] as number)) : v;
  }
  return out as T;
};

/** Least-squares slope of y over x. */
export const slope = (xs: readonly number[], ys: readonly number[]): number => {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i] as number;
    const y = ys[i] as number;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const d = n * sxx - sx * sx;
  return d === 0 ? 0 : (n * sxy - sx * sy) / d;
};

export const ratio = (a: number | undefined, b: number | undefined): number =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? Number.NaN : a / b;

export const fmt = (v: number | undefined, digits = 0): string => (v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));

export const fmtRps = (v: number | undefined): string => {
  if (v === undefined || !Number.isFinite(v)) return '—';
  return v >= 10_000 ? `${(v / 1000).toFixed(1)}k` : v >= 1000 ? `${(v / 1000).toFixed(2)}k` : v.toFixed(0);
};

export const fmtMs = (v: number | undefined): string => {
  if (v === undefined || !Number.isFinite(v)) return '—';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
};

export const fmtRatio = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '—' : `${(v * 100).toFixed(0)}%`);
