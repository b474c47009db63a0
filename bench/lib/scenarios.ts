/**
 * Scenarios of bench/run.ts that are more than one wrk run: first-event latency (open-loop
 * probe), configuration churn under load and the memory soak. Each returns its part of the results;
 * churn and soak take the runner's `measure` (one wrk run against a target, with its CPU and memory).
 */
import { MODELS, type LaunchedGateway } from './gateway.ts';
import { percentiles, type ProbeResult, runProbe } from './probe.ts';
import type { FirstEvent, Results, Run } from './results.ts';
import { gatewayRequests, type Kind, streamKind, type TargetName } from './requests.ts';
import { median, slope } from './stats.ts';
import type { WrkRequest } from './wrk.ts';

export interface Target {
  name: TargetName;
  url: string;
  pid: number;
  requests(kind: Kind): WrkRequest[] | undefined;
}

/** One wrk run's shape; with `count`, that many sequential requests on one connection instead (bench/lib/sequential.ts; the rest unused). */
export interface MeasureOptions {
  connections: number;
  durationS: number;
  delayMs?: number;
  timeoutS?: number;
  count?: number;
}

export type Measure = (t: Target, kind: Kind, o: MeasureOptions) => Promise<Run>;

/** Non-streaming load while a route is rewritten every 100 ms; each update counts once the embedded plane serves it. */
export const runChurn = async (
  measure: Measure,
  t: Target,
  gw: LaunchedGateway,
  durationS: number,
  say: (label: string, t: TargetName, r: Run) => void,
  log: (s: string) => void,
): Promise<NonNullable<Results['churn']>> => {
  log('configuration churn: route updates every 100 ms under load…');
  const steady = await measure(t, 'churn-json', { connections: 64, durationS });
  say('churn steady', 'gateway', steady);
  const changeMs: number[] = [];
  let stop = false;
  const changer = (async () => {
    let i = 0;
    while (!stop) {
      const targetsA = [{ connection: 'mock-openai', model: 'gpt-4o-mini', priority: 0, weight: 1 }];
      const targetsB = [
        { connection: 'mock-openai', model: 'gpt-4o-mini', priority: 0, weight: 3 },
        { connection: 'mock-openai', model: 'gpt-4o-mini-2024-07-18', priority: 0, weight: 1 },
      ];
      const c0 = performance.now();
      await gw.call('/admin.v1.AdminService/UpdateRoute', {
        customerId: 'bench-00',
        projectId: 'default',
        model: MODELS.churn,
        targets: i++ % 2 ? targetsA : targetsB,
      });
      // The write returns at commit; the change counts once the embedded plane serves it.
      await gw.converged();
      changeMs.push(performance.now() - c0);
      await Bun.sleep(100);
    }
  })();
  const churn = await measure(t, 'churn-json', { connections: 64, durationS });
  stop = true;
  await changer;
  say('churn', 'gateway', churn);
  log(
    `  ${changeMs.length} route updates, each served (GetConfigStatus: serving, polled every 20 ms) after p50 ${median(changeMs).toFixed(0)} ms`,
  );
  return { steady, churn, changes: changeMs.length, changeMs: percentiles(changeMs) };
};

/** Request records the target still holds in memory (its `/readyz`), once a segment ended: a store that fell behind shows here. */
const recordsQueued = async (url: string): Promise<number | undefined> => {
  try {
    const r = (await (await fetch(`${url}/readyz`)).json()) as { records?: { queued?: unknown } };
    return typeof r.records?.queued === 'number' ? r.records.queued : undefined;
  } catch {
    return undefined;
  }
};

/** Mixed traffic in 15 s segments; RSS per segment (read once the target is idle again) and the slope over the second half. */
export const runSoak = async (
  measure: Measure,
  t: Target,
  keys: string[],
  seconds: number,
  log: (s: string) => void,
): Promise<NonNullable<Results['soak']>> => {
  log(`soak: ${seconds} s of mixed traffic (chat, chat SSE, Messages cross-format, Responses) at 32 connections…`);
  const mix: WrkRequest[] = [];
  const parts = (['chat-json', 'chat-sse', 'messages-x-sse', 'responses-sse'] as Kind[]).map((k) => gatewayRequests(k, keys));
  for (let i = 0; i < keys.length; i++) for (const p of parts) mix.push(p[i] as WrkRequest);
  const mixed: Target = { ...t, requests: () => mix };
  const segments: NonNullable<Results['soak']>['segments'] = [];
  const segS = 15;
  const start = performance.now();
  while ((performance.now() - start) / 1000 < seconds - 1) {
    const run = await measure(mixed, 'chat-json', {
      connections: 32,
      durationS: Math.min(segS, Math.max(2, seconds - (performance.now() - start) / 1000)),
    });
    const queued = await recordsQueued(t.url);
    segments.push({
      t: (performance.now() - start) / 1000,
      rssMb: run.rssMb,
      rps: run.rps,
      errors: run.errors,
      ...(queued === undefined ? {} : { recordsQueued: queued }),
    });
    log(
      `  t=${segments.at(-1)?.t.toFixed(0)} s  ${run.rps.toFixed(0)} req/s  rss ${run.rssMb.toFixed(0)} MB  errors ${run.errors}${queued === undefined ? '' : `  records queued ${queued}`}`,
    );
  }
  const half = segments.slice(Math.floor(segments.length / 2));
  return {
    segments,
    slopeMbPerMin: slope(
      half.map((s) => s.t / 60),
      half.map((s) => s.rssMb),
    ),
    growthMb: (segments.at(-1)?.rssMb ?? 0) - (segments[0]?.rssMb ?? 0),
  };
};

/** Time to the first SSE event at 100 streams/s, per target and stream kind; added = target − direct on the same wire. */
export const runFirstEvent = async (
  target: (n: TargetName) => Target | undefined,
  idle: () => Promise<unknown>,
  quick: boolean,
  log: (s: string) => void,
): Promise<FirstEvent[]> => {
  log('first-event latency at 100 streams/s…');
  const probes: [TargetName, Kind][] = quick
    ? [
        ['direct', 'chat-sse'],
        ['gateway', 'chat-sse'],
      ]
    : [
        ['direct', 'chat-sse'],
        ['bare', 'chat-sse'],
        ['gateway', 'chat-sse'],
        ['gateway-pg', 'chat-sse'],
        ['portkey', 'chat-sse'],
        ['direct', 'messages-sse'],
        ['gateway', 'messages-sse'],
        ['gateway', 'messages-x-sse'],
        ['gateway', 'responses-sse'],
      ];
  const base: Partial<Record<string, ProbeResult>> = {};
  const out: FirstEvent[] = [];
  for (const [n, kind] of probes) {
    const t = target(n);
    const requests = t?.requests(kind);
    if (!t || !requests) continue;
    await idle();
    const result = await runProbe({ url: t.url, requests, rate: 100, durationS: quick ? 2 : 5, kind: streamKind(kind) });
    const wire = kind === 'messages-sse' ? 'messages' : 'chat';
    if (n === 'direct') base[wire] = result;
    const d = base[wire];
    const fe: FirstEvent = {
      target: n,
      kind,
      result,
      addedP50: d ? result.ttfb.p50 - d.ttfb.p50 : Number.NaN,
      addedP99: d ? result.ttfb.p99 - d.ttfb.p99 : Number.NaN,
    };
    out.push(fe);
    log(
      `  ${kind.padEnd(16)} ${n.padEnd(8)} first event p50 ${result.ttfb.p50.toFixed(2)} ms p99 ${result.ttfb.p99.toFixed(2)} ms (added ${fe.addedP50.toFixed(2)} / ${fe.addedP99.toFixed(2)})  errors ${result.errors}${result.firstError ? ` (${result.firstError})` : ''}`,
    );
  }
  return out;
};

/** The failing-primary goal (contract §14): with its breaker open, its CPU per request within 10% of chat-json's (no failing target). */
export const failingPrimaryLine = (r: Results): string => {
  const open = r.max['failing-primary']?.gateway;
  const plain = r.max['chat-json']?.gateway;
  if (!open || !plain) return 'failing-primary: not measured (needs chat-json and failing-primary through the gateway)';
  const ratio = open.cpuUs / plain.cpuUs;
  return `failing-primary: ${open.cpuUs.toFixed(0)} µs CPU/request, ${ratio.toFixed(2)}× chat-json's ${plain.cpuUs.toFixed(0)} µs (goal ≤ 1.10: ${ratio <= 1.1 ? 'met' : 'missed'})`;
};
