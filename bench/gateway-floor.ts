#!/usr/bin/env bun
/**
 * The floor of a gateway on Bun, non-streaming: bench/bare-proxy.ts as the bare proxy and with
 * `--work minimal` (parse, key and target lookup, serialize, parse the answer, a record object):
 * what the least gateway work costs on this machine, against which `dataplane_ratio` and `ratio`
 * of `bun run bench` can be read. Pinned like the main bench, interleaved rounds; medians of req/s
 * under wrk (chat-json, 32 connections) and of the proxy's CPU µs per request; last line JSON.
 *   bun bench/gateway-floor.ts [--rounds=5] [--duration=3] [--product] [--stream]
 * Measured 2026-11-27 (2-core VM): none 29.7, minimal 33.2 µs/request; floor_ratio 0.956.
 * `--product` adds the product floor (bench/product-proxy.ts `--work product`, bodies json, raw and
 * none: what every request of this product needs, the records' bodies priced per representation);
 * `--stream` measures chat streams (21 events) instead.
 */
import { join } from 'node:path';
import { printFloor, runFloor } from './lib/floor.ts';

const value = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const argv = process.argv.slice(2);
const product = join(import.meta.dir, 'product-proxy.ts');
const stream = argv.includes('--stream');
const modes = [
  ...(stream ? ['none'] : ['none', 'minimal']).map((m) => ({ name: m, args: ['--work', m] })),
  ...(argv.includes('--product')
    ? ['json', 'raw', 'none'].map((b) => ({ name: `product-${b}`, args: ['--work', 'product', '--bodies', b], script: product }))
    : []),
];
const results = await runFloor(stream ? 'chat-sse' : 'chat-json', modes, Number(value('rounds') ?? 5), Number(value('duration') ?? 3));
printFloor(results, stream ? 'stream' : 'req');
const [bare] = results;
const least = results.find((r) => r.name === 'minimal');
const ratios = Object.fromEntries(results.slice(1).map((r) => [`${r.name}_ratio`, bare ? Number((r.rps / bare.rps).toFixed(3)) : null]));
if (bare)
  console.log(
    JSON.stringify({
      ...(least ? { floor_ratio: Number((least.rps / bare.rps).toFixed(3)) } : {}),
      ...ratios,
      bare_us: Number(bare.us.toFixed(1)),
      ...Object.fromEntries(results.slice(1).map((r) => [`${r.name}_us`, Number(r.us.toFixed(1))])),
    }),
  );
