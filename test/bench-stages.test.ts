import { describe, expect, test } from 'bun:test';
import { attribute, BUN_ONLY, type CpuProfile } from '../bench/lib/stages.ts';

/** The stage attribution of bench/dp-profile.ts --stages, on a hand-made profile (no load is generated). */

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 1 });
const src = (path: string) => `/repo/src/${path}`;

/**
 * (root) ─┬─ post (upstream.ts) ── fetch (native)             → upstream call
 *         ├─ runPipeline (pipeline/index.ts) ── parseBody (body.ts) ── parse (native) → body
 *         ├─ #drain (remote-sink.ts) ── rowJsonWith (core/records.ts) ── stringify → shipping
 *         ├─ (anonymous) (native)                               → Bun
 *         ├─ (module) ── decodeChatRequest (formats/…)          → start-up, left out
 *         └─ (idle)                                             → left out
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 7, 10, 11, 13] },
    { id: 2, callFrame: frame('post', src('data-plane/upstream.ts')), children: [3] },
    { id: 3, callFrame: frame('fetch', '[native code]') },
    { id: 4, callFrame: frame('runPipeline', src('pipeline/index.ts')), children: [5] },
    { id: 5, callFrame: frame('parseBody', src('pipeline/body.ts')), children: [6] },
    { id: 6, callFrame: frame('parse', '[native code]') },
    { id: 7, callFrame: frame('#drain', src('data-plane/remote/remote-sink.ts')), children: [8] },
    { id: 8, callFrame: frame('rowJsonWith', src('core/records.ts')), children: [9] },
    { id: 9, callFrame: frame('stringify', '[native code]') },
    { id: 10, callFrame: frame('(anonymous)', '[native code]') },
    { id: 11, callFrame: frame('(module)', src('main.ts')), children: [12] },
    { id: 12, callFrame: frame('decodeChatRequest', src('formats/chat-completions/request.ts')) },
    { id: 13, callFrame: frame('(idle)') },
  ],
  samples: [3, 3, 3, 6, 6, 9, 10, 10, 12, 13, 13, 4],
};

describe('bench stage attribution', () => {
  test('a native leaf counts for the code of ours that called it, shipping claims its whole stack, start-up and idle are left out', () => {
    const stages = attribute(profile);
    expect(Object.fromEntries(stages)).toEqual({
      'upstream call (Bun fetch)': 3,
      'request body read and parsed': 2,
      'record shipping to the management plane': 1,
      [BUN_ONLY]: 2,
      'pipeline and dispatch glue': 1,
    });
  });
});
