/**
 * The echo provider's extra endpoints, deterministic and in-process: embeddings (a unit vector
 * derived from the text), legacy completions (the prompt back) and rerank (word overlap). Images
 * and speech are not offered.
 */
import type { JsonObject, JsonValue } from '../canonical/types.ts';
import type { ExtraEndpoint, UpstreamTarget } from './types.ts';

const DIMENSIONS = 16;
const words = (s: string): string[] =>
  s
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');

const strings = (v: JsonValue | undefined): string[] => {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  return [];
};

/** A deterministic unit vector: FNV-1a of each word spread over the dimensions. */
export const echoEmbedding = (text: string): number[] => {
  const v = new Array<number>(DIMENSIONS).fill(0);
  for (const w of words(text)) {
    let h = 0x811c9dc5;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193) >>> 0;
    v[h % DIMENSIONS] = (v[h % DIMENSIONS] ?? 0) + ((h >>> 8) % 2 === 0 ? 1 : -1);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => Math.round((x / norm) * 1e6) / 1e6);
};

const tokens = (texts: readonly string[]): number =>
  Math.max(
    1,
    texts.reduce((n, t) => n + words(t).length, 0),
  );

export const echoExtra = (endpoint: ExtraEndpoint, body: JsonObject, target: UpstreamTarget): JsonObject | undefined => {
  const model = target.upstreamModel;
  switch (endpoint) {
    case 'embeddings': {
      const inputs = strings(body.input);
      const n = tokens(inputs);
      return {
        object: 'list',
        data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: echoEmbedding(t) })),
        model,
        usage: { prompt_tokens: n, total_tokens: n },
      };
    }
    case 'completions': {
      const prompts = strings(body.prompt);
      const inTok = tokens(prompts);
      const outTok = tokens(prompts.length > 0 ? prompts : ['echo']);
      return {
        id: `cmpl-echo-${inTok}`,
        object: 'text_completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: (prompts.length > 0 ? prompts : ['echo']).map((text, index) => ({ index, text, logprobs: null, finish_reason: 'stop' })),
        usage: { prompt_tokens: inTok, completion_tokens: outTok, total_tokens: inTok + outTok },
      };
    }
    case 'rerank': {
      const query = new Set(words(typeof body.query === 'string' ? body.query : ''));
      const docs = strings(body.documents);
      const scored = docs.map((d, index) => {
        const w = words(d);
        const hits = w.filter((x) => query.has(x)).length;
        return { index, relevance_score: w.length === 0 ? 0 : Math.round((hits / w.length) * 1e6) / 1e6 };
      });
      scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
      const top = typeof body.top_n === 'number' ? scored.slice(0, body.top_n) : scored;
      return { id: `rerank-echo-${docs.length}`, model, results: top, usage: { total_tokens: tokens([...query, ...docs]) } };
    }
    default:
      return undefined;
  }
};
