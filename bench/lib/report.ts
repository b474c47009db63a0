/** The console table, the Markdown report and the latency-vs-load plot (SVG). */
import type { FirstEvent, Results, Run } from './results.ts';
import { CROSS_FORMAT_SSE, KIND_LABEL, type Kind, type TargetName } from './requests.ts';
import { fmt, fmtMs, fmtRatio, fmtRps, ratio } from './stats.ts';

const TARGET_LABEL: Record<TargetName, string> = {
  direct: 'direct (mock)',
  bare: 'bare Bun proxy',
  'floor-json': 'product floor, bodies json',
  'floor-raw': 'product floor, bodies raw',
  gateway: 'gateway',
  'gateway-pg': 'gateway, Postgres store',
  dataplane: 'separate data plane',
  portkey: 'Portkey',
};
const ORDER: TargetName[] = ['direct', 'bare', 'floor-json', 'floor-raw', 'gateway', 'gateway-pg', 'dataplane', 'portkey'];

/** The bare-proxy run each gateway figure is compared with. */
const comparator = (r: Results, kind: Kind): Run | undefined => {
  if (CROSS_FORMAT_SSE.has(kind)) return r.max['chat-sse']?.bare;
  switch (kind) {
    case 'fallback-json':
    case 'failing-primary':
    case 'churn-json':
      return r.max['chat-json']?.bare;
    default:
      return r.max[kind]?.bare;
  }
};

const HEAD = ['scenario', 'target', 'req/s', '÷ bare', 'p50 ms', 'p99 ms', 'CPU µs/req', '÷ bare', 'RSS MB', 'errors'];

const rowsOf = (r: Results): string[][] => {
  const rows: string[][] = [];
  const runRow = (label: string, t: string, run: Run, bare: Run | undefined): string[] => [
    label,
    t,
    fmtRps(run.rps),
    bare && bare !== run ? fmtRatio(ratio(run.rps, bare.rps)) : '',
    fmtMs(run.p50),
    fmtMs(run.p99),
    fmt(run.cpuUs, 1),
    bare && bare !== run ? fmtRatio(ratio(run.cpuUs, bare.cpuUs)) : '',
    fmt(run.rssMb, 0),
    String(run.errors),
  ];
  for (const kind of Object.keys(r.max) as Kind[]) {
    const byTarget = r.max[kind] ?? {};
    let first = true;
    for (const n of ORDER) {
      const run = byTarget[n];
      if (!run) continue;
      rows.push(runRow(first ? `${kind} @64` : '', TARGET_LABEL[n], run, n === 'direct' ? undefined : comparator(r, kind)));
      first = false;
    }
  }
  if (r.churn) {
    rows.push(runRow('churn-json @64', 'gateway, steady', r.churn.steady, r.max['chat-json']?.bare));
    rows.push(runRow('', `gateway, ${r.churn.changes} updates`, r.churn.churn, r.max['chat-json']?.bare));
  }
  if (r.slow) {
    let first = true;
    for (const n of ORDER) {
      const run = r.slow[n];
      if (!run) continue;
      rows.push(runRow(first ? 'slow-sse @1000' : '', TARGET_LABEL[n], run, n === 'direct' ? undefined : r.slow.bare));
      first = false;
    }
  }
  return rows;
};

const fixedRows = (r: Results): string[][] => {
  if (!r.fixed) return [];
  const d = r.fixed.runs.direct;
  return ORDER.flatMap((n) => {
    const run = r.fixed?.runs[n];
    if (!run) return [];
    return [
      [
        TARGET_LABEL[n],
        fmt(run.rps, 0),
        fmtMs(run.p50),
        fmtMs(run.p99),
        n === 'direct' || !d ? '—' : `+${fmtMs(run.p50 - d.p50)} / +${fmtMs(run.p99 - d.p99)}`,
        fmt(run.cpuUs, 1),
        String(run.errors),
      ],
    ];
  });
};

const firstRows = (r: Results): string[][] =>
  r.firstEvent.map((f: FirstEvent) => [
    f.kind,
    TARGET_LABEL[f.target],
    fmt(f.result.achievedRate, 0),
    fmtMs(f.result.ttfb.p50),
    fmtMs(f.result.ttfb.p99),
    f.target === 'direct' ? '—' : `+${fmtMs(f.addedP50)} / +${fmtMs(f.addedP99)}`,
    fmtMs(f.result.total.p50),
    String(f.result.errors),
  ]);

/** One connection, sequential requests: added = target − direct, µs. */
const c1Rows = (r: Results): string[][] => {
  const d = r.c1?.runs.direct;
  const us = (ms: number) => `${ms >= 0 ? '+' : ''}${(ms * 1000).toFixed(0)}`;
  return ORDER.flatMap((n) => {
    const run = r.c1?.runs[n];
    if (!run) return [];
    return [
      [
        TARGET_LABEL[n],
        String(run.requests),
        fmt(run.p50 * 1000, 0),
        fmt(run.p99 * 1000, 0),
        n === 'direct' || !d ? '—' : `${us(run.p50 - d.p50)} / ${us(run.p99 - d.p99)}`,
        fmt(run.cpuUs, 1),
        String(run.errors),
      ],
    ];
  });
};
const C1_HEAD = ['target', 'requests', 'p50 µs', 'p99 µs', 'added p50 / p99 µs', 'CPU µs/req', 'errors'];

const FIXED_HEAD = ['target', 'req/s', 'p50 ms', 'p99 ms', 'added p50 / p99 ms', 'CPU µs/req', 'errors'];
const FIRST_HEAD = ['stream', 'target', 'streams/s', 'first event p50 ms', 'p99 ms', 'added p50 / p99 ms', 'whole stream p50 ms', 'errors'];

const textTable = (head: string[], rows: string[][]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
};

const mdTable = (head: string[], rows: string[][]): string =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

export const renderTable = (r: Results): string => {
  const parts = [
    `\nMax rate (medians of ${r.meta.rounds} round${r.meta.rounds === 1 ? '' : 's'}; ÷ bare = ratio to the bare Bun proxy in this run)`,
    textTable(HEAD, rowsOf(r)),
  ];
  if (r.fixed)
    parts.push(
      `\nFixed moderate rate (${r.fixed.rate} req/s, non-streaming): added latency over direct`,
      textTable(FIXED_HEAD, fixedRows(r)),
    );
  if (r.c1)
    parts.push(
      `\nOne connection, ${r.c1.requests} sequential requests (non-streaming): added latency over direct`,
      textTable(C1_HEAD, c1Rows(r)),
    );
  if (r.firstEvent.length) parts.push('\nFirst-event latency at 100 streams/s (open loop)', textTable(FIRST_HEAD, firstRows(r)));
  parts.push(
    '\nGoals',
    textTable(
      ['goal', 'target', 'measured', 'met'],
      r.goals.map((g) => [g.goal, g.target, g.value, g.met === undefined ? '—' : g.met ? 'yes' : 'NO']),
    ),
  );
  return parts.join('\n');
};

// ---- Markdown -------------------------------------------------------------------------------------

export const renderMarkdown = (r: Results, plotFile: string): string => {
  const m = r.meta;
  const out: string[] = [];
  out.push(`# Benchmark report${m.quick ? ' (quick run)' : ''}`);
  out.push('');
  out.push(
    `Generated by \`bun run bench${m.quick ? ' -- --quick' : ''}\` on ${m.date} (commit ${m.commit ?? 'unknown'}), ${m.elapsedS.toFixed(0)} s. Methodology: [docs/benchmarks.md](../../docs/benchmarks.md).`,
  );
  out.push('');
  out.push(
    `- Machine: ${m.machine.cpus} × ${m.machine.model}; Bun ${m.bun}. ${m.machine.cores}.${m.allocatorPurgeDelay !== undefined ? ` Every Bun process with \`MIMALLOC_PURGE_DELAY=${m.allocatorPurgeDelay}\` (as \`bun run start\` sets it).` : ''}${m.jscRamSize ? ` \`BUN_JSC_forceRAMSize\`: embedded gateway ${m.jscRamSize.gateway || 'unset'} (as \`bun run start\`), PostgreSQL-store gateway ${m.jscRamSize.postgres || 'unset'}, data plane ${m.jscRamSize.dataplane || 'unset'} (the chart's default limits).` : ''}`,
  );
  out.push(
    `- Load: wrk (1 thread) at 64 connections unless noted, ${m.durationS} s per measurement, ${m.rounds} interleaved round(s) for the headline scenarios (medians).`,
  );
  out.push(
    `- Mock upstream: 744-byte chat completion, or 21 SSE events written one by one (OpenAI and Anthropic wire formats). Gateway: \`bun src/main.ts serve\`, embedded PGlite store, ${m.snapshot.customers} customers, ${m.snapshot.routes} routes, ${m.snapshot.keys} API keys (${m.snapshot.source}); requests cycle through 100 keys.`,
  );
  if (m.provisioning) {
    out.push(
      `- Provisioning through the management API: first start ${(m.provisioning.firstStartMs / 1000).toFixed(1)} s, catalog + customers + connections + routes ${(m.provisioning.configMs / 1000).toFixed(1)} s, 1,000 keys ${(m.provisioning.keysMs / 1000).toFixed(1)} s. Gateway under test started in ${(m.gatewayStartMs / 1000).toFixed(1)} s; idle RSS ${m.gatewayIdleRssMb.toFixed(0)} MB.`,
    );
  }
  out.push(`- Peer: ${m.peer.message}${m.peer.honoNodeServer ? ` (@hono/node-server ${m.peer.honoNodeServer})` : ''}.`);
  out.push(`- Postgres variant: ${m.postgres.message}.`);
  if (m.dataplane) out.push(`- Separate data plane: ${m.dataplane.message}.`);
  if (m.floor) out.push(`- Product floor: ${m.floor.message}.`);
  out.push('');
  out.push('## Goals');
  out.push('');
  out.push(
    mdTable(
      ['goal', 'target', 'measured', 'met'],
      r.goals.map((g) => [g.goal, g.target, g.value, g.met === undefined ? '—' : g.met ? '✅ yes' : '❌ no']),
    ),
  );
  out.push('');
  out.push('## Max rate');
  out.push('');
  out.push(
    'Medians. "÷ bare" is the ratio to the bare Bun proxy measured in the same run (for cross-format, Responses, fallback and churn: the bare proxy on the same upstream wire). CPU is the process under test (for "direct": the mock). The product floor is `bench/product-proxy.ts --work product`: what every request of this product needs, written plainly (docs/benchmarks.md).',
  );
  out.push('');
  out.push(mdTable(HEAD, rowsOf(r)));
  out.push('');
  out.push('Scenarios:');
  out.push('');
  for (const k of Object.keys(r.max) as Kind[]) out.push(`- \`${k}\`: ${KIND_LABEL[k]}`);
  if (r.churn)
    out.push(
      `- \`churn-json\`: ${KIND_LABEL['churn-json']}; ${r.churn.changes} route updates, each served by the data plane (GetConfigStatus \`serving\`, polled every 20 ms) after p50 ${fmtMs(r.churn.changeMs.p50)} ms / p99 ${fmtMs(r.churn.changeMs.p99)} ms`,
    );
  if (r.slow)
    out.push(`- \`slow-sse\`: ${KIND_LABEL['slow-sse']}. Ideal stream time 450 ms; p99 close to p50 means every stream is served fairly.`);
  out.push('');
  if (r.fixed) {
    out.push(`## Added latency at a fixed moderate rate (${r.fixed.rate} req/s)`);
    out.push('');
    out.push(mdTable(FIXED_HEAD, fixedRows(r)));
    out.push('');
  }
  if (r.c1) {
    out.push(`## Added latency at one connection (${r.c1.requests} sequential requests)`);
    out.push('');
    out.push(mdTable(C1_HEAD, c1Rows(r)));
    out.push('');
  }
  if (r.firstEvent.length) {
    out.push('## First-event latency at 100 streams/s');
    out.push('');
    out.push(mdTable(FIRST_HEAD, firstRows(r)));
    out.push('');
  }
  out.push('## Latency vs load');
  out.push('');
  out.push(`![latency vs load](${plotFile})`);
  out.push('');
  if (r.sweep) {
    const head = ['connections', ...ORDER.filter((n) => r.sweep?.[n]).map((n) => `${TARGET_LABEL[n]} req/s · p50 · p99`)];
    const conns = r.sweep.direct?.map((x) => x.connections) ?? [];
    const rows = conns.map((c, i) => [
      String(c),
      ...ORDER.filter((n) => r.sweep?.[n]).map((n) => {
        const x = r.sweep?.[n]?.[i];
        return x ? `${fmtRps(x.rps)} · ${fmtMs(x.p50)} · ${fmtMs(x.p99)}` : '—';
      }),
    ]);
    out.push(mdTable(head, rows));
    out.push('');
  }
  if (r.soak) {
    out.push('## Soak');
    out.push('');
    out.push(
      `Mixed traffic (Chat, Chat SSE, Messages → OpenAI SSE, Responses SSE) at 32 connections. RSS slope over the second half: ${r.soak.slopeMbPerMin.toFixed(2)} MB/min; first → last segment ${r.soak.growthMb.toFixed(0)} MB.`,
    );
    out.push('');
    out.push(
      mdTable(
        ['t (s)', 'req/s', 'RSS MB', 'records queued', 'errors'],
        r.soak.segments.map((s) => [
          s.t.toFixed(0),
          fmt(s.rps, 0),
          fmt(s.rssMb, 0),
          s.recordsQueued === undefined ? '—' : String(s.recordsQueued),
          String(s.errors),
        ]),
      ),
    );
    out.push('');
  }
  if (Object.keys(r.rounds).length) {
    out.push('## Every round');
    out.push('');
    const rows: string[][] = [];
    for (const [kind, byTarget] of Object.entries(r.rounds)) {
      for (const [n, runs] of Object.entries(byTarget ?? {}))
        rows.push([kind, n, (runs ?? []).map((x) => fmtRps(x.rps)).join(', '), (runs ?? []).map((x) => fmt(x.cpuUs, 0)).join(', ')]);
    }
    out.push(mdTable(['scenario', 'target', 'req/s per round', 'CPU µs/req per round'], rows));
    out.push('');
  }
  return `${out.join('\n')}\n`;
};

// ---- SVG plot: latency (p50 solid, p99 dashed, log scale) vs achieved throughput ----------------

const COLORS: Record<TargetName, string> = {
  direct: '#6b7280',
  bare: '#2563eb',
  'floor-json': '#0891b2',
  'floor-raw': '#0d9488',
  gateway: '#dc2626',
  'gateway-pg': '#f59e0b',
  dataplane: '#7c3aed',
  portkey: '#16a34a',
};

export const renderPlot = (r: Results): string => {
  const series: { name: TargetName; points: { x: number; p50: number; p99: number; c: number }[] }[] = [];
  for (const n of ORDER) {
    let pts: { x: number; p50: number; p99: number; c: number }[] = [];
    const sweep = r.sweep?.[n];
    if (sweep?.length) pts = sweep.map((s) => ({ x: s.rps, p50: s.p50, p99: s.p99, c: s.connections }));
    else {
      const f = r.fixed?.runs[n];
      const mx = r.max['chat-json']?.[n];
      if (f) pts.push({ x: f.rps, p50: f.p50, p99: f.p99, c: f.connections });
      if (mx) pts.push({ x: mx.rps, p50: mx.p50, p99: mx.p99, c: mx.connections });
    }
    // In order of offered load (connections), so a curve bending back shows throughput falling.
    pts = pts.filter((p) => p.x > 0 && p.p50 > 0);
    if (pts.length) series.push({ name: n, points: pts });
  }
  const W = 760;
  const H = 440;
  const L = 70;
  const R = 200;
  const T = 40;
  const B = 50;
  const maxX = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.x))) * 1.05;
  const ys = series.flatMap((s) => s.points.flatMap((p) => [p.p50, p.p99]));
  const minY = Math.max(0.05, Math.min(...ys, 1) / 1.5);
  const maxY = Math.max(...ys, 1) * 1.5;
  const lx = (x: number) => L + (x / maxX) * (W - L - R);
  const ly = (y: number) => T + (1 - (Math.log10(y) - Math.log10(minY)) / (Math.log10(maxY) - Math.log10(minY))) * (H - T - B);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2 - 60}" y="22" font-size="14" font-weight="bold">Latency vs load (non-streaming chat)</text>`);
  // Axes and grid.
  out.push(
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#111"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#111"/>`,
  );
  for (const tick of [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) {
    if (tick < minY || tick > maxY) continue;
    const y = ly(tick);
    out.push(
      `<line x1="${L}" y1="${y.toFixed(1)}" x2="${W - R}" y2="${y.toFixed(1)}" stroke="#e5e7eb"/><text x="${L - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${tick}</text>`,
    );
  }
  const step = niceStep(maxX / 6);
  for (let x = 0; x <= maxX; x += step) {
    const px = lx(x);
    out.push(
      `<line x1="${px.toFixed(1)}" y1="${H - B}" x2="${px.toFixed(1)}" y2="${H - B + 5}" stroke="#111"/><text x="${px.toFixed(1)}" y="${H - B + 18}" text-anchor="middle">${x >= 1000 ? `${x / 1000}k` : x}</text>`,
    );
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">achieved requests/s</text>`);
  out.push(
    `<text x="16" y="${(T + H - B) / 2}" transform="rotate(-90 16 ${(T + H - B) / 2})" text-anchor="middle">latency, ms (log scale)</text>`,
  );
  // Series.
  series.forEach((s, i) => {
    const c = COLORS[s.name];
    const path = (key: 'p50' | 'p99') => s.points.map((p, j) => `${j ? 'L' : 'M'}${lx(p.x).toFixed(1)},${ly(p[key]).toFixed(1)}`).join(' ');
    out.push(`<path d="${path('p50')}" fill="none" stroke="${c}" stroke-width="2"/>`);
    out.push(`<path d="${path('p99')}" fill="none" stroke="${c}" stroke-width="1.5" stroke-dasharray="5,4"/>`);
    for (const p of s.points) {
      out.push(`<circle cx="${lx(p.x).toFixed(1)}" cy="${ly(p.p50).toFixed(1)}" r="3" fill="${c}"/>`);
      out.push(`<text x="${(lx(p.x) + 5).toFixed(1)}" y="${(ly(p.p50) + 12).toFixed(1)}" font-size="9" fill="${c}">${p.c}</text>`);
    }
    const y = T + 10 + i * 20;
    out.push(
      `<line x1="${W - R + 15}" y1="${y}" x2="${W - R + 40}" y2="${y}" stroke="${c}" stroke-width="2"/><text x="${W - R + 46}" y="${y + 4}">${TARGET_LABEL[s.name]}</text>`,
    );
  });
  const ly0 = T + 10 + series.length * 20 + 10;
  out.push(
    `<line x1="${W - R + 15}" y1="${ly0}" x2="${W - R + 40}" y2="${ly0}" stroke="#111" stroke-width="2"/><text x="${W - R + 46}" y="${ly0 + 4}">p50</text>`,
  );
  out.push(
    `<line x1="${W - R + 15}" y1="${ly0 + 18}" x2="${W - R + 40}" y2="${ly0 + 18}" stroke="#111" stroke-dasharray="5,4"/><text x="${W - R + 46}" y="${ly0 + 22}">p99</text>`,
  );
  out.push(
    `<text x="${L + 10}" y="${T + 14}" fill="#6b7280">${r.sweep ? 'point labels: connections (wrk, 1 thread)' : 'quick run: two points per target (fixed rate, max rate); labels: connections'}</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
};

const niceStep = (raw: number): number => {
  const p = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
};
