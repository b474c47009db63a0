/**
 * Generated hostile request bodies for the inference fuzz test. Bodies are built as JSON text (not
 * through JSON.stringify) so they can carry what a hostile client sends: lone-surrogate and NUL
 * escapes, numbers beyond every range, nesting tens of thousands of levels deep, broken syntax.
 */

/** Small, fast, seedable PRNG (mulberry32). */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** A JSON fragment kept as written. */
class Raw {
  constructor(readonly text: string) {}
}
type Node = Raw | string | number | boolean | null | Node[] | { [k: string]: Node };

const serialise = (v: Node): string => {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(serialise).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${serialise(x)}`)
      .join(',')}}`;
  return JSON.stringify(v);
};

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const HOSTILE_STRINGS: readonly string[] = [
  '"x\\udead"',
  '"\\ud800"',
  '"tail \\ud83d"',
  '"\\udc00\\ud800"',
  '"a\\u0000b"',
  '"\\u0000"',
  '"\\u202egpt-mini"',
  '"gpt\\u200b-mini"',
  '"\\ufeff"',
  '"\\u0001\\u0002\\u001f"',
  '"</script><script>alert(1)</script>"',
  '"%s%s%n%x"',
  '"\\\\u0000"',
  '"😀😀😀"',
  '""',
  '"sk-upstream-openai-secret"',
  `"${'A'.repeat(70_000)}"`,
  `"${'\\ud800'.repeat(2_000)}"`,
];

const EXTREME_NUMBERS: readonly string[] = [
  '1e999',
  '-1e999',
  '3000000000',
  '1.5',
  '-1',
  '0',
  '-0',
  '9007199254740993',
  '1e-400',
  '123456789012345678901234567890',
  '2147483648',
  '-2147483649',
  '0.0000001',
];

const WRONG_TYPES: readonly string[] = ['null', 'true', 'false', '[]', '{}', '"str"', '42', '[null]', '[[]]', '{"":{}}'];

/** Nesting as text: arrays, objects, or a JSON-schema-looking chain. */
const deep = (r: Rand): Raw => {
  const n = pick(r, [70, 200, 1_000, 20_000, 60_000]);
  switch (Math.floor(r() * 3)) {
    case 0:
      return new Raw(`${'['.repeat(n)}1${']'.repeat(n)}`);
    case 1:
      return new Raw(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);
    default:
      return new Raw(`${'{"type":"object","properties":{"x":'.repeat(n)}{"type":"string"}${'}}'.repeat(n)}`);
  }
};

const hostileValue = (r: Rand): Node => {
  const roll = r();
  if (roll < 0.3) return new Raw(pick(r, HOSTILE_STRINGS));
  if (roll < 0.55) return new Raw(pick(r, EXTREME_NUMBERS));
  if (roll < 0.8) return new Raw(pick(r, WRONG_TYPES));
  return deep(r);
};

const tools = (): Node => [
  { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
];

/** A plausible body per endpoint: the starting point that mutations damage. */
const BASES: Record<string, (model: string, r: Rand) => Record<string, Node>> = {
  '/v1/chat/completions': (model, r) => ({
    model,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
    max_tokens: 16,
    ...(r() < 0.5 ? { tools: tools() } : {}),
    ...(r() < 0.3 ? { response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } } } : {}),
    ...(r() < 0.3 ? { stream: true, stream_options: { include_usage: true } } : {}),
  }),
  '/v1/responses': (model, r) => ({
    model,
    input: r() < 0.5 ? 'hi' : [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    ...(r() < 0.4 ? { tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] } : {}),
    ...(r() < 0.3 ? { stream: true } : {}),
    store: false,
  }),
  '/v1/messages': (model, r) => ({
    model,
    max_tokens: 16,
    messages: [{ role: 'user', content: r() < 0.5 ? 'hi' : [{ type: 'text', text: 'hi' }] }],
    ...(r() < 0.5 ? { tools: [{ name: 'f', description: 'd', input_schema: { type: 'object', properties: {} } }] } : {}),
    ...(r() < 0.3 ? { stream: true } : {}),
  }),
  '/v1/embeddings': (model) => ({ model, input: ['hello', 'world'] }),
  '/v1/completions': (model) => ({ model, prompt: 'hi', max_tokens: 5 }),
  '/v1/rerank': (model) => ({ model, query: 'q', documents: ['a', 'b'] }),
  '/v1/images/generations': (model) => ({ model, prompt: 'a cat', n: 1 }),
  '/v1/audio/speech': (model) => ({ model, input: 'hello', voice: 'alloy' }),
};

/** Every container path in a tree, for mutations that replace or add a value there. */
const paths = (v: Node, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] => {
  if (v instanceof Raw || v === null || typeof v !== 'object') return out;
  out.push(at);
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      paths(x, [...at, i], out);
    });
  } else for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
};

const containerAt = (root: Node, path: (string | number)[]): Node => {
  let cur: Node = root;
  for (const p of path) cur = (cur as Record<string | number, Node>)[p] as Node;
  return cur;
};

const mutate = (r: Rand, body: Record<string, Node>): void => {
  const all = paths(body);
  const target = containerAt(body, pick(r, all));
  const value = hostileValue(r);
  if (Array.isArray(target)) {
    if (target.length > 0 && r() < 0.7) target[Math.floor(r() * target.length)] = value;
    else target.push(value);
    return;
  }
  const obj = target as Record<string, Node>;
  const keys = Object.keys(obj);
  const key =
    keys.length > 0 && r() < 0.75
      ? pick(r, keys)
      : pick(r, ['unknown_field', '__proto__', 'constructor', '\u202eevil', 'x'.repeat(300), '']);
  // An own property even for `__proto__`, so it is serialised as a key like any other.
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
};

export interface Fuzzed {
  path: string;
  body: string;
}

/** Broken syntax that no mutation of a tree produces. */
const broken = (r: Rand, model: string): string =>
  pick(r, [
    '',
    '   ',
    '{',
    '{"model":',
    `{"model":"${model}",}`,
    `{"model":"${model}" "messages":[]}`,
    'null',
    '[]',
    '"just a string"',
    '\u0000\u0001\u0002',
    `{"model":"${model}","messages":[{"role":"user","content":"\\q"}]}`,
    `{"model":"${model}","messages":[{"role":"user","content":"\\u12"}]}`,
    `{"model":"${model}","model":"${model}","messages":[{"role":"user","content":"dup"}]}`,
    `\ufeff{"model":"${model}","messages":[{"role":"user","content":"bom"}]}`,
    `{"model":"${model}","messages":[{"role":"user","content":"nan"}],"temperature":NaN}`,
  ]);

/** `count` requests spread over every endpoint and the given models. */
export const fuzzRequests = (r: Rand, count: number, models: readonly string[]): Fuzzed[] => {
  const endpoints = Object.keys(BASES);
  const out: Fuzzed[] = [];
  for (let i = 0; i < count; i++) {
    const path = pick(r, endpoints);
    const model = pick(r, models);
    if (r() < 0.08) {
      out.push({ path, body: broken(r, model) });
      continue;
    }
    const body = (BASES[path] as (m: string, r: Rand) => Record<string, Node>)(model, r);
    const n = 1 + Math.floor(r() * 3);
    for (let k = 0; k < n; k++) mutate(r, body);
    out.push({ path, body: serialise(body) });
  }
  return out;
};
