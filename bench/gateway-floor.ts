#!/usr/bin/env bun
/**
 * The floor of a gateway on Bun, non-streaming: bench/bare-proxy.ts as the bare proxy and with
 * `--work minimal` (parse, key and target lookup, serialize, parse the answer, a record object):
 * what the least gateway work costs on this machine, against which `dataplane_ratio` and `ratio`
 * of `bun run bench` can be read. Pinned like the main bench, interleaved rounds; medians of req/s
 * under wrk (chat-json, 32 connections) and of the proxy's CPU µs per request; last line JSON.
 *   bun bench/gateway-floor.ts [--rounds=5] [--duration=3]
 * Measured 2026-11-27 (2-core VM): none 29.7, minimal 33.2 µs/request; floor_ratio 0.956.
 */
import { printFloor, runFloor } from './lib/floor.ts';

const value = (name: string): string | undefined => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const results = await runFloor(
  'chat-json',
  ['none', 'minimal'].map((m) => ({ name: m, args: ['--work', m] })),
  Number(value('rounds') ?? 5),
  Number(value('duration') ?? 3),
);
printFloor(results, 'req');
const [bare, least] = results;
if (bare && least) console.log(JSON.stringify({ floor_ratio: Number((least.rps / bare.rps).toFixed(3)), bare_us: Number(bare.us.toFixed(1)), minimal_us: Number(least.us.toFixed(1)) }));
