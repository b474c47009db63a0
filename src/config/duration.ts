/** Parses durations such as `250ms`, `10s`, `5m`, `1h`, `30d` into milliseconds; null when malformed. */
export const parseDuration = (text: string): number | null => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2];
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : unit === 'h' ? 3_600_000 : 86_400_000;
  return Math.round(n * factor);
};
