import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { OpOutput } from '../../api/index.ts';
import { type Bar, DayChart, HBarChart } from './chart.tsx';
import { messageOfError } from './fields.ts';
import type { Scope } from './resource.tsx';
import { Table } from './table.tsx';

/** Usage and cost of the project in view (GetUsage) by API key, model and day, as charts and tables. */

type Usage = OpOutput<'GetUsage'>;
type Group = Usage['groups'][number];
type Measure = 'cost' | 'requests' | 'tokens';

const MEASURES: Record<Measure, { label: string; value: (g: Group) => number; shown: (g: Group) => string }> = {
  cost: { label: 'Cost (USD)', value: (g) => Number(g.cost), shown: (g) => `$${g.cost}` },
  requests: { label: 'Requests', value: (g) => g.requests, shown: (g) => String(g.requests) },
  tokens: {
    label: 'Tokens (input + output)',
    value: (g) => g.inputTokens + g.outputTokens,
    shown: (g) => String(g.inputTokens + g.outputTokens),
  },
};

const day = (d: Date): string => d.toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

/** The day groups (`YYYY-MM-DD`) with a zero group for each day from `from` to `to` that had no request. */
export const everyDay = (groups: readonly Group[], from: string, to: string): Group[] => {
  const byDay = new Map(groups.map((g) => [g.key, g]));
  const out: Group[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 400; t += DAY_MS) {
    const key = day(new Date(t));
    out.push(byDay.get(key) ?? { key, requests: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, cost: '0' });
  }
  return out;
};

export function UsagePage({ scope }: { scope: Scope }) {
  const session = scope.session;
  const [from, setFrom] = useState(() => day(new Date(Date.now() - 29 * DAY_MS)));
  const [to, setTo] = useState(() => day(new Date()));
  const [measure, setMeasure] = useState<Measure>('cost');
  const [data, setData] = useState<{ keys: Usage; models: Usage; days: Usage; names: Record<string, string> } | undefined>(undefined);
  const [error, setError] = useState('');
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let stale = false;
    const range = { startTime: `${from}T00:00:00Z`, endTime: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString() };
    const at = { customerId: scope.customerId, projectId: scope.projectId, ...range };
    void Promise.all([
      session.client.call('GetUsage', { ...at, groupBy: 'api_key' }),
      session.client.call('GetUsage', { ...at, groupBy: 'model' }),
      session.client.call('GetUsage', { ...at, groupBy: 'day' }),
      session.client
        .call('ListApiKeys', { customerId: scope.customerId, projectId: scope.projectId, includeRevoked: true, pageSize: 1000 })
        .then(
          (a) => Object.fromEntries(a.apiKeys.map((k) => [k.id, `${k.name} (${k.keyPrefix})`])),
          (): Record<string, string> => ({}),
        ),
    ]).then(
      ([keys, models, days, names]) => {
        if (stale) return;
        setData({ keys, models, days, names });
        setError('');
      },
      (e: unknown) => {
        if (!(e instanceof ApiError) || stale) return;
        setData(undefined);
        setError(messageOfError(e.message));
      },
    );
    return () => {
      stale = true;
    };
  }, [session, scope.customerId, scope.projectId, from, to, tick]);

  const m = MEASURES[measure];
  const bars = (groups: readonly Group[], name: (k: string) => string = (k) => k): Bar[] =>
    groups.map((g) => ({ label: name(g.key), value: m.value(g), shown: m.shown(g) }));
  const keyName = (k: string) => data?.names[k] ?? k;
  return (
    <section aria-labelledby="h-usage">
      <h2 id="h-usage">Usage and cost</h2>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          setTick((n) => n + 1);
        }}
      >
        <label for="usage-from">From</label>
        <input id="usage-from" type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
        <label for="usage-to">To</label>
        <input id="usage-to" type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        <label for="usage-measure">Measure</label>
        <select
          id="usage-measure"
          value={measure}
          onChange={(e) =>
            setMeasure(e.currentTarget.value === 'requests' ? 'requests' : e.currentTarget.value === 'tokens' ? 'tokens' : 'cost')
          }
        >
          {Object.entries(MEASURES).map(([k, v]) => (
            <option key={k} value={k}>
              {v.label}
            </option>
          ))}
        </select>
        <button type="submit">Refresh</button>
      </form>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {data === undefined ? (
        error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : (
        <>
          <p role="status" class="totals">
            Total: {data.days.total.requests} requests, {data.days.total.inputTokens} input and {data.days.total.outputTokens} output
            tokens, ${data.days.total.cost}
          </p>
          <div class="charts">
            <figure>
              <figcaption>By API key</figcaption>
              <HBarChart id="chart-keys" title={`${m.label} by API key`} bars={bars(data.keys.groups, keyName)} />
            </figure>
            <figure>
              <figcaption>By model</figcaption>
              <HBarChart id="chart-models" title={`${m.label} by model`} bars={bars(data.models.groups)} />
            </figure>
            <figure class="wide">
              <figcaption>By day</figcaption>
              <DayChart id="chart-days" title={`${m.label} by day`} bars={bars(everyDay(data.days.groups, from, to))} />
            </figure>
          </div>
          <h3>Figures by model</h3>
          <Table
            label="Usage by model"
            columns={['model', 'requests', 'inputTokens', 'outputTokens', 'cachedInputTokens', 'cost']}
            rows={data.models.groups.map((g) => ({
              key: g.key,
              cells: [g.key, g.requests, g.inputTokens, g.outputTokens, g.cachedInputTokens, `$${g.cost}`],
            }))}
          />
          <h3>Figures by API key</h3>
          <Table
            label="Usage by API key"
            columns={['API key', 'requests', 'inputTokens', 'outputTokens', 'cost']}
            rows={data.keys.groups.map((g) => ({
              key: g.key,
              cells: [keyName(g.key), g.requests, g.inputTokens, g.outputTokens, `$${g.cost}`],
            }))}
          />
        </>
      )}
    </section>
  );
}
