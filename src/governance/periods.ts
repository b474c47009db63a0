/**
 * Budget periods and rate-limit windows, in UTC. A period's counter key names its start, so a new
 * period starts from zero without any reset job; `resetsAt` is the next period's start.
 */

export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;

const DAY = 86_400_000;

/** [start, end) of the period holding `now` (epoch ms); `total` is [0, ∞). */
export const periodBounds = (period: BudgetPeriod, now: number): { start: number; end: number | null } => {
  if (period === 'total') return { start: 0, end: null };
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const today = Date.UTC(y, m, d.getUTCDate());
  if (period === 'day') return { start: today, end: today + DAY };
  if (period === 'week') {
    // ISO weeks start on Monday.
    const start = today - ((d.getUTCDay() + 6) % 7) * DAY;
    return { start, end: start + 7 * DAY };
  }
  return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
};

/** The shared counter of a budget for the period holding `now`. */
export const budgetCounterKey = (budgetId: string, period: BudgetPeriod, now: number): string =>
  `gw:budget:${budgetId}:${periodBounds(period, now).start}`;

/** How long a period's counter must outlive its end (corrections of requests in flight); 0: forever. */
export const budgetCounterTtlMs = (period: BudgetPeriod, now: number): number => {
  const { end } = periodBounds(period, now);
  return end === null ? 0 : end - now + DAY;
};

export const MINUTE = 60_000;

/** The fixed one-minute rate-limit window holding `now`: its start and end. */
export const minuteWindow = (now: number): { start: number; end: number } => {
  const start = Math.floor(now / MINUTE) * MINUTE;
  return { start, end: start + MINUTE };
};

/** Whole seconds from `now` until `at` (at least 1). */
export const secondsUntil = (at: number, now: number): number => Math.max(1, Math.ceil((at - now) / 1000));

/**
 * A decimal USD string ("12.5", "0.000000001") → nano-USD, exactly; undefined when it is not a
 * plain non-negative decimal with at most 9 fractional digits or exceeds `maxNano`.
 */
export const parseUsd = (text: string, maxNano: number = Number.MAX_SAFE_INTEGER): number | undefined => {
  const m = /^(\d{1,16})(?:\.(\d{1,9}))?$/.exec(text);
  if (!m) return undefined;
  const nano = BigInt(m[1] as string) * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
  return nano <= BigInt(maxNano) ? Number(nano) : undefined;
};
