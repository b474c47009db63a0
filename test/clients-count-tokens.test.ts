import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/** Token counting (contract §2): the upstream's count where it can count, else a flagged estimate. */

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

test('Anthropic SDK countTokens: counted by an Anthropic upstream, estimated (and flagged) for an OpenAI one', async () => {
  const client = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
  const params = { model: 'claude-mini', system: 'be brief', messages: [{ role: 'user' as const, content: 'count me' }] };
  const counted = await client.messages.countTokens(params).withResponse();
  expect(counted.data.input_tokens).toBe(1234);
  expect(counted.response.headers.get('x-gateway-token-count')).toBeNull();
  const sent = w.an.requests.at(-1);
  expect(sent?.path).toBe('/v1/messages/count_tokens');
  expect(sent?.body.model).toBe('claude-haiku-4-5');
  const estimated = await client.messages.countTokens({ ...params, model: 'gpt-mini' }).withResponse();
  expect(estimated.data.input_tokens).toBeGreaterThan(0);
  expect((estimated.data as { estimated?: boolean }).estimated).toBe(true);
  expect(estimated.response.headers.get('x-gateway-token-count')).toBe('estimated');
});

test('POST /v1/responses/input_tokens answers in the OpenAI shape; unknown models are the usual 404', async () => {
  const post = (body: unknown) =>
    fetch(`${w.tg.url}/v1/responses/input_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${w.p.apiKey}` },
      body: JSON.stringify(body),
    });
  const res = await post({ model: 'gpt-mini', input: 'how many tokens is this?' });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { object: string; input_tokens: number; estimated: boolean };
  expect(body.object).toBe('response.input_tokens');
  expect(body.input_tokens).toBeGreaterThan(0);
  expect(body.estimated).toBe(true);
  expect((await post({ model: 'nope', input: 'x' })).status).toBe(404);
});
