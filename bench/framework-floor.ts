#!/usr/bin/env bun
/**
 * What mounting a route in Elysia costs over `Bun.serve`'s own route table (issue 40, decision 3):
 * bench/product-proxy.ts `--work none` (the bare proxy on `Bun.serve`) beside `--work elysia` (the
 * same proxy mounted as an Elysia route, `parse: 'none'`, no hooks), pinned like the main bench,
 * interleaved rounds under wrk (32 connections); medians of req/s and of the proxy's CPU µs per
 * request, for non-streaming requests and for streams (21 events). Last line JSON:
 * `elysia_json_us` / `elysia_sse_us` are the framework layer's µs per request (Elysia minus Bun.serve).
 *   bun bench/framework-floor.ts [--rounds=5] [--duration=3]
 */
import { join } from 'node:path';
import { type FloorResult, runFloor } from './lib/floor.ts';

const value = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const rounds = Number(value('rounds') ?? 5);
const durationS = Number(value('duration') ?? 3);
const script = join(import.meta.dir, 'product-proxy.ts');
const modes = ['none', 'elysia'].map((w) => ({ name: w, args: ['--work', w], script }));
const delta = (rs: readonly FloorResult[]): number => {
  const [bare, elysia] = [rs.find((r) => r.name === 'none'), rs.find((r) => r.name === 'elysia')];
  return bare && elysia ? Math.round((elysia.us - bare.us) * 10) / 10 : Number.NaN;
};
const out: Record<string, number> = {};
for (const kind of ['chat-json', 'chat-sse'] as const) {
  const rs = await runFloor(kind, modes, rounds, durationS);
  for (const r of rs)
    process.stderr.write(
      `${kind.padEnd(10)} ${r.name.padEnd(7)} ${Math.round(r.rps)} req/s ${r.us.toFixed(1)} µs/req (${r.rounds.map((x) => x.toFixed(0)).join(',')})\n`,
    );
  out[kind === 'chat-json' ? 'elysia_json_us' : 'elysia_sse_us'] = delta(rs);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
