/**
 * Bar charts in plain SVG: no chart library. The console's charts are a handful of bars (per key,
 * per model, per day); SVG draws them with no dependency, under the page's strict CSP (no inline
 * styles, no eval), styled by the page's CSS, crisp at any width, and readable by assistive
 * technology: each chart is an image with a title and a description, and its figures are also
 * given as a table beside it.
 */

export interface Bar {
  label: string;
  value: number;
  /** The value as shown (e.g. "$0.0042"). */
  shown: string;
}

const W = 640;

/** Horizontal bars, one per group (keys, models). */
export function HBarChart({ id, title, bars }: { id: string; title: string; bars: Bar[] }) {
  const max = Math.max(0, ...bars.map((b) => b.value));
  // Drawn at about the width it is shown at (a column of the charts grid), so its text stays legible.
  const w = 400;
  const row = 26;
  const labelW = 150;
  const valueW = 80;
  const h = Math.max(1, bars.length) * row + 8;
  const span = w - labelW - valueW;
  return (
    <svg class="chart" viewBox={`0 0 ${w} ${h}`} role="img" aria-labelledby={`${id}-t ${id}-d`} preserveAspectRatio="xMinYMin meet">
      <title id={`${id}-t`}>{title}</title>
      <desc id={`${id}-d`}>{bars.length === 0 ? 'No data.' : bars.map((b) => `${b.label}: ${b.shown}`).join('; ')}</desc>
      {bars.map((b, i) => {
        const y = 4 + i * row;
        const bw = max > 0 ? Math.max(b.value > 0 ? 2 : 0, (b.value / max) * span) : 0;
        return (
          <g key={b.label}>
            <text class="chart-label" x={labelW - 8} y={y + 16} text-anchor="end">
              {b.label.length > 19 ? `${b.label.slice(0, 18)}…` : b.label}
            </text>
            <rect class="chart-bar" x={labelW} y={y + 3} width={bw} height={row - 8} rx={3} />
            <text class="chart-value" x={labelW + bw + 6} y={y + 16}>
              {b.shown}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** Vertical bars over days, with the first and last day named under them. */
export function DayChart({ id, title, bars }: { id: string; title: string; bars: Bar[] }) {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const h = 180;
  const base = h - 24;
  const n = Math.max(1, bars.length);
  const slot = (W - 20) / n;
  return (
    <svg class="chart days" viewBox={`0 0 ${W} ${h}`} role="img" aria-labelledby={`${id}-t ${id}-d`} preserveAspectRatio="xMinYMin meet">
      <title id={`${id}-t`}>{title}</title>
      <desc id={`${id}-d`}>{bars.length === 0 ? 'No data.' : bars.map((b) => `${b.label}: ${b.shown}`).join('; ')}</desc>
      <line class="chart-axis" x1={10} y1={base} x2={W - 10} y2={base} />
      {bars.map((b, i) => {
        const bh = max > 0 ? Math.max(b.value > 0 ? 2 : 0, (b.value / max) * (base - 24)) : 0;
        const x = 10 + i * slot + slot * 0.15;
        return (
          <g key={b.label}>
            <rect class="chart-bar" x={x} y={base - bh} width={slot * 0.7} height={bh} rx={2} />
            {bars.length <= 14 || b.value === max ? (
              <text class="chart-value" x={x + slot * 0.35} y={base - bh - 5} text-anchor="middle">
                {b.shown}
              </text>
            ) : null}
          </g>
        );
      })}
      {bars.length > 0 ? (
        <>
          <text class="chart-label" x={10} y={h - 6}>
            {bars[0]?.label}
          </text>
          <text class="chart-label" x={W - 10} y={h - 6} text-anchor="end">
            {bars[bars.length - 1]?.label}
          </text>
        </>
      ) : null}
    </svg>
  );
}
