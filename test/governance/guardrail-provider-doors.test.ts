import { afterAll, beforeAll, expect, test } from 'bun:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import OpenAI, { toFile } from 'openai';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockVendors, startMockVendors, VENDOR_KEY } from '../support/mock-guardrail-vendors.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { connectMcp, textOf } from '../support/mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from '../support/mcp-servers.ts';
import { meteredWorld, type World } from './support.ts';

/**
 * Provider guardrails (contract §15) on the doors beyond the three chat formats: each line of a
 * batch, MCP tool arguments and results; and a long stream checked in overlapping windows, released
 * as it flows (the client never waits for the whole answer).
 */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let v: MockVendors;
let mcp: TestMcpServer;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  v = startMockVendors();
  mcp = startStreamableServer('a', {});
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url);
  const g = (name: string, stage: string, kind: string, provider: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    tg.must(admin('CreateGuardrail'), { ...at(), name, stage, kind, action: 'block', provider, ...more });
  await g('lakera-in', 'input', 'lakera', { url: v.url, authValue: VENDOR_KEY });
  await g('presidio-out', 'output', 'presidio', { url: v.url });
  await g('hook', 'both', 'webhook', { url: `${v.url}/webhook` }, { windowChars: 200 });
  await tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: mcp.url });
  await tg.must(admin('AddProjectMcpServer'), { ...at(), serverId: 'alpha' });
  await tg.must(admin('CreateMcpProfile'), { ...at(), profileId: 'tools', servers: [{ serverId: 'alpha', prefix: '' }] });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
  v?.stop();
  await mcp?.stop();
});

test('MCP: tool arguments are checked on input (Lakera blocks), tool results on output (Presidio redacts)', async () => {
  const { client } = await connectMcp(`${tg.url}/mcp/tools`, w.apiKey);
  const blocked = await client.callTool({ name: 'echo', arguments: { text: 'inject-lakera now' } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(blocked).toBeInstanceOf(McpError);
  expect(String(blocked)).toContain('lakera-in');
  const out = textOf(await client.callTool({ name: 'echo', arguments: { text: 'reach me at zoe@corp.io' } }));
  expect(out).not.toContain('zoe@corp.io');
  expect(out).toContain('[REDACTED:EMAIL_ADDRESS]');
  const sent = v.calls.filter((c) => c.path === '/v2/guard').map((c) => JSON.stringify(c.body));
  expect(sent.some((s) => s.includes('inject-lakera now'))).toBe(true);
  await client.close();
});

test('batches: each line is checked — a flagged line fails alone with guardrail_blocked, the others are served redacted', async () => {
  const client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  const line = (id: string, content: string) => ({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'metered', max_tokens: 20, messages: [{ role: 'user', content }] },
  });
  const text = `${[line('ok', 'plain line'), line('bad', 'inject-lakera here'), line('pii', 'please hide-me now')].map((l) => JSON.stringify(l)).join('\n')}\n`;
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  let done = batch;
  for (let i = 0; i < 300 && done.status !== 'completed' && done.status !== 'failed'; i++) {
    await Bun.sleep(100);
    done = await client.batches.retrieve(batch.id);
  }
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
  const errors = done.error_file_id ? await (await client.files.content(done.error_file_id)).text() : '';
  expect(errors).toContain('"bad"');
  expect(errors).toContain('lakera-in');
  const sent = oa.requests.map((r) => JSON.stringify(r.body));
  expect(sent.some((s) => s.includes('inject-lakera'))).toBe(false);
  expect(sent.some((s) => s.includes('hide-me'))).toBe(false);
  expect(sent.some((s) => s.includes('please [REDACTED:hook] now'))).toBe(true);
});

test('a long stream is checked in overlapping windows and released as it flows; a redaction mid-stream is rewritten', async () => {
  const words = Array.from({ length: 120 }, (_, i) => `word${i}`);
  words[70] = 'hide-me';
  const chunks = words.map((x) => `${x} `);
  oa.script(() => ({ text: chunks.join(''), textChunks: chunks, usage: { input: 5, output: 120 }, chunkDelayMs: 15 }));
  v.calls.length = 0;
  const t0 = performance.now();
  const r = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'metered', stream: true, messages: [{ role: 'user', content: 'go' }] }),
  });
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let all = '';
  let firstText: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    all += dec.decode(value, { stream: true });
    if (firstText === undefined && all.includes('word0')) firstText = performance.now() - t0;
  }
  const total = performance.now() - t0;
  oa.script(undefined);
  // The first text arrived long before the upstream's ~1.8 s of chunks ended.
  expect(firstText).toBeDefined();
  expect(firstText ?? total).toBeLessThan(total / 3);
  const deltas = [...all.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('');
  expect(deltas).toBe(chunks.join('').replace('hide-me', '[REDACTED:hook]'));
  // Several windows, each at most windowChars + its overlap, and consecutive ones overlapping.
  const windows = v.calls.filter((c) => c.path === '/webhook' && (c.body as { stage: string }).stage === 'output');
  const texts = windows.map((c) => (c.body as { texts: string[] }).texts[0] ?? '');
  expect(texts.length).toBeGreaterThan(3);
  expect(Math.max(...texts.map((t) => t.length))).toBeLessThanOrEqual(220);
  const joined = chunks.join('');
  const starts = texts.map((t) => joined.indexOf(t.replace('[REDACTED:hook]', 'hide-me').slice(0, 30)));
  const overlapping = starts.slice(1).filter((s, i) => s >= 0 && s < (starts[i] ?? 0) + (texts[i]?.length ?? 0));
  expect(overlapping.length).toBeGreaterThan(0);
});
