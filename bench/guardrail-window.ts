/**
 * Time to first token of a stream with and without a windowed provider guardrail (contract §15,
 * docs/guardrail-providers.md): the same scripted upstream stream (60 chunks, 10 ms apart) through
 * two projects of one in-process gateway, one with an output `webhook` guardrail (windowChars 1000)
 * answered by a local mock vendor after `--vendor-ms` (default 0; try 20). Prints the median and p90
 * of the time from sending the request to the first content delta, and the stream's total time.
 * Indicative: run it niced (`nice -n 19 bun bench/guardrail-window.ts --n=20`).
 */
import { admin, startTestGateway } from '../test/support/gateway.ts';
import { startMockVendors } from '../test/support/mock-guardrail-vendors.ts';
import { startMockUpstream } from '../test/support/mock-upstreams.ts';
import { meteredWorld } from '../test/governance/support.ts';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const N = arg('n', 20);
const VENDOR_MS = arg('vendor-ms', 0);

const oa = startMockUpstream('openai');
const an = startMockUpstream('anthropic');
const vendors = startMockVendors();
vendors.latencyMs = VENDOR_MS;
const tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
const plain = await meteredWorld(tg, oa.url, an.url, 'plain');
const guarded = await meteredWorld(tg, oa.url, an.url, 'guarded', { suffix: '-g' });
await tg.must(admin('CreateGuardrail'), {
  customerId: guarded.customerId,
  projectId: guarded.projectId,
  name: 'hook',
  stage: 'output',
  kind: 'webhook',
  action: 'block',
  windowChars: 1000,
  provider: { url: `${vendors.url}/webhook` },
});
const chunks = Array.from({ length: 60 }, (_, i) => `token${i} `);
oa.script(() => ({ text: chunks.join(''), textChunks: chunks, usage: { input: 5, output: 60 }, chunkDelayMs: 10 }));

const once = async (apiKey: string, model: string): Promise<{ ttft: number; total: number }> => {
  const t0 = performance.now();
  const r = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'go' }] }),
  });
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let seen = '';
  let ttft = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += dec.decode(value, { stream: true });
    if (Number.isNaN(ttft) && seen.includes('"content":"token')) ttft = performance.now() - t0;
  }
  return { ttft, total: performance.now() - t0 };
};

const stats = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0).toFixed(1);
  return `median ${q(0.5)} ms, p90 ${q(0.9)} ms`;
};

const runs = { plain: [] as { ttft: number; total: number }[], guarded: [] as { ttft: number; total: number }[] };
await once(plain.apiKey, 'metered');
await once(guarded.apiKey, 'metered-g');
for (let i = 0; i < N; i++) {
  runs.plain.push(await once(plain.apiKey, 'metered'));
  runs.guarded.push(await once(guarded.apiKey, 'metered-g'));
}
console.log(`stream of 60 chunks 10 ms apart, ${N} runs each, vendor latency ${VENDOR_MS} ms`);
for (const [name, r] of Object.entries(runs))
  console.log(`${name.padEnd(8)} ttft ${stats(r.map((x) => x.ttft))}; total ${stats(r.map((x) => x.total))}`);
console.log(`webhook calls: ${vendors.calls.length}`);
await tg.stop();
oa.stop();
an.stop();
vendors.stop();
