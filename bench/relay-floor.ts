#!/usr/bin/env bun
/**
 * What relaying a stream in JavaScript costs on Bun, before any gateway work: bench/bare-proxy.ts
 * in its three modes under wrk (chat-sse, 21 events, 32 connections), pinned like the main bench,
 * interleaved rounds; CPU µs per stream of the proxy process (all threads), medians.
 *   bun bench/relay-floor.ts [--rounds=5] [--duration=3]
 * Measured 2026-11-26 (2-core VM): native 61.4, js 83.1, jstext 87.5 µs/stream.
 */
import { printFloor, runFloor } from './lib/floor.ts';

const value = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const modes = ['native', 'js', 'jstext'].map((m) => ({ name: m, args: ['--relay', m] }));
printFloor(await runFloor('chat-sse', modes, Number(value('rounds') ?? 5), Number(value('duration') ?? 3)), 'stream');
