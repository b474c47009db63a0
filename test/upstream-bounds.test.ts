import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { parseInput } from '../src/batches/lines.ts';
import { GatewayError } from '../src/core/errors.ts';
import { createEventStreamParser, encodeEventStreamMessage } from '../src/providers/eventstream.ts';
import { createNdjsonParser, createSseParser } from '../src/providers/framing.ts';
import { requestRecords } from '../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type Hostile, startHostileLlm, startHostileMcp } from './support/hostile-upstreams.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';

/**
 * Every body the gateway buffers from an upstream has a bound (issue 38 item 3), against the real
 * listener and hostile upstreams that would send 200 MB (LLM) or 48 MB / 200,012 tools (MCP): past
 * the bound the read is cancelled, the client gets 502 `upstream_response_too_large` in its own
 * format (mid-stream: the format's error event; MCP: a JSON-RPC error), fallback tries the next
 * target, and the process's memory stays flat.
 */

const MiB = 1024 * 1024;
const HUGE = 200 * 1000 * 1000;
/** What the hostile side enqueues past a bound before the cancel reaches it (socket buffers on both sides). */
const SLACK = 16 * MiB;
let tg: TestGateway;
let llm: Hostile;
let mcpHostile: Hostile;
let mcpMany: Hostile;
let apiKey: string;
const acme = { customerId: 'acme', projectId: 'default' };

const chat = (model: string, stream = false, id = model) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-request-id': id },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });

const messages = (model: string, stream = false) =>
  fetch(`${tg.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, stream, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });

const recordOf = async (clientRequestId: string) => {
  await tg.gw.records.flush();
  return (await tg.gw.store.db.select().from(requestRecords)).find((r) => r.clientRequestId === clientRequestId);
};

beforeAll(async () => {
  llm = startHostileLlm(HUGE);
  mcpHostile = startHostileMcp(48 * 1000 * 1000);
  mcpMany = startHostileMcp(0, 200_012);
  tg = await startTestGateway({
    GATEWAY_MAX_UPSTREAM_RESPONSE: '4MiB',
    GATEWAY_MAX_STREAM_EVENT: '1MiB',
    GATEWAY_MCP_MAX_MESSAGE_BYTES: '2MiB',
  });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  // Every case fails the same hostile targets on purpose (breakers are test/circuit-breaker.test.ts's).
  await tg.must(admin('UpsertProjectSetting'), { ...acme, settingName: 'circuit-breaker', settingValue: '{"failures": 0}' });
  await tg.must(admin('CreateProviderConnection'), {
    ...acme,
    name: 'hostile',
    provider: 'openai',
    baseUrl: `${llm.url}/v1`,
    apiKey: 'sk-hostile-upstream',
  });
  const routes: Record<string, string[]> = {
    'h-json': ['endless-json'],
    'h-event': ['endless-event'],
    'h-late': ['late-endless-event'],
    'h-fallback': ['endless-json', 'fine'],
    'h-stream-fallback': ['endless-event', 'fine'],
  };
  for (const [model, targets] of Object.entries(routes)) {
    const created = (await tg.must(admin('CreateModel'), {
      model,
      provider: 'openai',
      mode: 'chat',
      capabilities: ['chat'],
      contextWindow: 128000,
      maxOutputTokens: 4096,
      inputPricePerMillion: 1,
      outputPricePerMillion: 1,
    })) as {
      model: { id: string };
    };
    await tg.must(admin('AddProjectModel'), { ...acme, modelId: created.model.id });
    await tg.must(admin('CreateRoute'), {
      ...acme,
      model,
      targets: targets.map((t, priority) => ({ connection: 'hostile', model: t, priority })),
    });
  }
  await tg.must(admin('CreateMcpServer'), { serverId: 'hostile', url: mcpHostile.url });
  await tg.must(admin('CreateMcpServer'), { serverId: 'many', url: mcpMany.url });
  for (const serverId of ['hostile', 'many']) await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'bounded', servers: [{ serverId: 'hostile' }] });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'lists', servers: [{ serverId: 'hostile' }, { serverId: 'many' }] });
  apiKey = ((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u1', enterpriseContext: acme })) as { apiKey: string }).apiKey;
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  llm?.stop();
  mcpHostile?.stop();
  mcpMany?.stop();
});

/** Waits for the hostile upstream to see `n` cancellations (the gateway's cancel reaches it asynchronously). */
const cancelledAtLeast = async (h: Hostile, n: number): Promise<number> => {
  const deadline = Date.now() + 15_000;
  while (h.state.cancelled < n && Date.now() < deadline) await Bun.sleep(20);
  return h.state.cancelled;
};

describe('LLM answers', () => {
  test('a non-streaming answer past GATEWAY_MAX_UPSTREAM_RESPONSE: 502 upstream_response_too_large in the chat and Messages formats, the upstream cancelled', async () => {
    const before = { ...llm.state };
    const c = await chat('h-json', false, 'json-1');
    expect(c.status).toBe(502);
    const cj = (await c.json()) as { error: { type: string; code: string; message: string } };
    expect(cj.error).toMatchObject({ type: 'api_error', code: 'upstream_response_too_large' });
    expect(cj.error.message).toContain(`larger than the limit of ${4 * MiB} bytes (GATEWAY_MAX_UPSTREAM_RESPONSE)`);
    const m = await messages('h-json');
    expect(m.status).toBe(502);
    const mj = (await m.json()) as { type: string; error: { type: string; message: string } };
    expect(mj.type).toBe('error');
    expect(mj.error.message).toContain('GATEWAY_MAX_UPSTREAM_RESPONSE');
    expect(await cancelledAtLeast(llm, before.cancelled + 2)).toBeGreaterThanOrEqual(before.cancelled + 2);
    // Two answers of 200 MB each were offered; each stopped a little over its bound (plus what
    // socket buffers took in before the cancel arrived).
    expect(llm.state.produced - before.produced).toBeLessThan(2 * (4 * MiB + SLACK));
    expect(llm.state.completed).toBe(before.completed);
    const rec = await recordOf('json-1');
    expect(rec?.errorCode).toBe('upstream_response_too_large');
    expect(rec?.httpStatus).toBe(502);
  }, 30_000);

  test('fallback: the oversized answer fails its attempt and the next target answers', async () => {
    const c = await chat('h-fallback', false, 'fallback-1');
    expect(c.status).toBe(200);
    expect(((await c.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('fine');
    const rec = await recordOf('fallback-1');
    expect(rec?.attempts).toBe(2);
    expect(rec?.httpStatus).toBe(200);
  }, 30_000);

  test('a stream whose first event never ends: the stream is cancelled past GATEWAY_MAX_STREAM_EVENT, a plain 502 (or the next target)', async () => {
    const before = { ...llm.state };
    const c = await chat('h-event', true, 'event-1');
    expect(c.status).toBe(502);
    const cj = (await c.json()) as { error: { code: string; message: string } };
    expect(cj.error.code).toBe('upstream_response_too_large');
    expect(cj.error.message).toContain(`larger than the limit of ${MiB} bytes (GATEWAY_MAX_STREAM_EVENT)`);
    expect(await cancelledAtLeast(llm, before.cancelled + 1)).toBeGreaterThanOrEqual(before.cancelled + 1);
    expect(llm.state.produced - before.produced).toBeLessThan(MiB + SLACK);
    const f = await chat('h-stream-fallback', true, 'event-fallback');
    expect(f.status).toBe(200);
    expect(await f.text()).toContain('"fine"');
    expect((await recordOf('event-fallback'))?.attempts).toBe(2);
  }, 30_000);

  test('mid-stream, an event that never ends becomes the format’s error event (chat and Messages); the upstream is cancelled', async () => {
    const before = { ...llm.state };
    const c = await chat('h-late', true, 'late-1');
    expect(c.status).toBe(200);
    const text = await c.text();
    expect(await cancelledAtLeast(llm, before.cancelled + 1)).toBeGreaterThanOrEqual(before.cancelled + 1);
    expect(text).toContain('first ');
    expect(text).toContain('upstream_response_too_large');
    expect(text).toContain('GATEWAY_MAX_STREAM_EVENT');
    const m = await messages('h-late', true);
    expect(m.status).toBe(200);
    const mt = await m.text();
    expect(mt).toContain('event: error');
    expect(mt).toContain('GATEWAY_MAX_STREAM_EVENT');
    expect(await cancelledAtLeast(llm, before.cancelled + 2)).toBeGreaterThanOrEqual(before.cancelled + 2);
    expect(llm.state.produced - before.produced).toBeLessThan(2 * (MiB + SLACK));
    expect((await recordOf('late-1'))?.errorCode).toBe('upstream_response_too_large');
  }, 30_000);
});

describe('MCP upstream messages', () => {
  test('a 48 MB tool result (JSON or one SSE event) fails the call with a JSON-RPC error naming GATEWAY_MCP_MAX_MESSAGE_BYTES; the session goes on', async () => {
    const before = { ...mcpHostile.state };
    const { client } = await connectMcp(`${tg.url}/mcp/bounded`, apiKey);
    for (const name of ['hostile__big_json', 'hostile__big_sse']) {
      const e = await client.callTool({ name, arguments: {} }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(McpError);
      expect(e instanceof McpError ? e.message : '').toContain(`larger than the limit of ${2 * MiB} bytes (GATEWAY_MCP_MAX_MESSAGE_BYTES)`);
    }
    expect(textOf(await client.callTool({ name: 'hostile__small', arguments: {} }))).toBe('small');
    await client.close();
    expect(await cancelledAtLeast(mcpHostile, before.cancelled + 2)).toBeGreaterThanOrEqual(before.cancelled + 2);
    expect(mcpHostile.state.produced - before.produced).toBeLessThan(2 * (2 * MiB + SLACK));
    expect(mcpHostile.state.completed).toBe(before.completed);
  }, 30_000);

  test('a list of 200,012 tools is cut at the bound: that server is left out of the list, the others listed', async () => {
    const { client } = await connectMcp(`${tg.url}/mcp/lists`, apiKey);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['hostile__big_json', 'hostile__big_sse', 'hostile__small']);
    await client.close();
    expect(await cancelledAtLeast(mcpMany, 1)).toBeGreaterThanOrEqual(1);
    expect(mcpMany.state.completed).toBe(0);
  }, 30_000);
});

test('memory stays flat: 10 hostile answers of 200 MB each (JSON and never-ending events) grow the RSS by far less than 64 MB', async () => {
  for (let i = 0; i < 2; i++) await (await chat('h-event', true)).text();
  Bun.gc(true);
  const rss0 = process.memoryUsage().rss;
  const before = llm.state.produced;
  for (let i = 0; i < 5; i++) {
    expect((await chat('h-json')).status).toBe(502);
    await (await chat('h-late', true)).text();
  }
  Bun.gc(true);
  const grown = process.memoryUsage().rss - rss0;
  // 2 GB was offered; each read stopped just past its bound.
  expect(llm.state.produced - before).toBeLessThan(10 * (4 * MiB + SLACK));
  expect(grown).toBeLessThan(64 * MiB);
}, 60_000);

describe('the parsers hold no event past their bound', () => {
  const tooLarge = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return e instanceof GatewayError ? e.errorCode : 'other';
    }
    return undefined;
  };

  test('SSE: an event of the bound passes, one character more is refused while it arrives (before its blank line)', () => {
    const p = createSseParser(100);
    expect(p.push(`data: ${'a'.repeat(94)}\n\n`)).toEqual([{ data: 'a'.repeat(94) }]);
    const q = createSseParser(100);
    expect(q.push(`data: ${'a'.repeat(50)}\n`)).toEqual([]);
    expect(tooLarge(() => q.push(`data: ${'b'.repeat(60)}`))).toBe('upstream_response_too_large');
    // Many short lines of one event count together.
    const r = createSseParser(100);
    expect(
      tooLarge(() => {
        for (let i = 0; i < 20; i++) r.push('data: 0123456789\n');
      }),
    ).toBe('upstream_response_too_large');
  });

  test('NDJSON: a line without its end is refused past the bound', () => {
    const p = createNdjsonParser(100);
    expect(p.push(`{"a":"${'x'.repeat(80)}"}\n`)).toHaveLength(1);
    expect(tooLarge(() => p.push(`{"a":"${'x'.repeat(120)}`))).toBe('upstream_response_too_large');
  });

  test('AWS event-stream: a frame announcing more than the bound is refused from its 12-byte prelude', () => {
    const small = encodeEventStreamMessage({ ':event-type': 'chunk' }, 'x'.repeat(50));
    expect(createEventStreamParser(200).push(small)).toHaveLength(1);
    const big = encodeEventStreamMessage({ ':event-type': 'chunk' }, 'x'.repeat(5000));
    expect(tooLarge(() => createEventStreamParser(200).push(big.subarray(0, 12)))).toBe('upstream_response_too_large');
    // A frame split into many chunks is still parsed whole.
    const p = createEventStreamParser(10_000);
    const frames = [];
    for (let i = 0; i < big.length; i += 7) frames.push(...p.push(big.subarray(i, i + 7)));
    expect(frames).toHaveLength(1);
    expect(frames[0]?.data).toBe('x'.repeat(5000));
  });
});

describe('batch input files', () => {
  const line = (i: number, pad = 0) =>
    JSON.stringify({
      custom_id: `r${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'm', messages: [], pad: 'x'.repeat(pad) },
    });

  test('more requests than GATEWAY_BATCH_MAX_LINES: the file is refused with too_many_lines at the first one past it', () => {
    const content = Array.from({ length: 12 }, (_, i) => line(i)).join('\n');
    const r = parseInput(content, '/v1/chat/completions', { maxLines: 10, maxLineBytes: 10_000 });
    expect(r.errors).toEqual([
      { code: 'too_many_lines', message: 'The input file has more than 10 requests (GATEWAY_BATCH_MAX_LINES).', line: 11 },
    ]);
    expect(parseInput(content, '/v1/chat/completions', { maxLines: 12, maxLineBytes: 10_000 }).lines).toHaveLength(12);
  });

  test('a line longer than GATEWAY_MAX_BODY is refused with line_too_large, without being parsed', () => {
    const content = [line(1), line(2, 2000), line(3)].join('\n');
    const r = parseInput(content, '/v1/chat/completions', { maxLines: 10, maxLineBytes: 1000 });
    expect(r.errors).toEqual([
      { code: 'line_too_large', message: 'This line is longer than the limit of 1000 bytes (GATEWAY_MAX_BODY).', line: 2 },
    ]);
  });
});
