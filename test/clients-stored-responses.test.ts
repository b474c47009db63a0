import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { z } from 'zod';
import { apikeyOp } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Stored Responses (contract §2) with the client that hit the failure: the AI SDK's default OpenAI
 * provider (Responses API, store: true) sends earlier assistant output back as item_reference.
 * Both upstream families serve the conversation (the gateway resolves references itself).
 */

let w: World;
const UPSTREAMS = [
  ['gpt-mini', 'openai'],
  ['claude-mini', 'anthropic'],
] as const;

beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

const provider = (apiKey = w.p.apiKey) => createOpenAI({ baseURL: `${w.tg.url}/v1`, apiKey });
const sdk = (apiKey = w.p.apiKey) => new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey, maxRetries: 0 });
const upstream = (family: 'openai' | 'anthropic') => (family === 'openai' ? w.oa : w.an);
const lastSent = (family: 'openai' | 'anthropic') => JSON.stringify(upstream(family).requests.at(-1)?.body);

describe('AI SDK OpenAI (Responses) provider, store: true', () => {
  for (const [model, family] of UPSTREAMS) {
    test(`second turn with item_reference reaches ${family} with the whole conversation`, async () => {
      const messages: ModelMessage[] = [{ role: 'user', content: 'first question' }];
      const one = await generateText({ model: provider().responses(model), messages });
      expect(one.text).toBe(`${family} says: first question`);
      messages.push(...one.response.messages, { role: 'user', content: 'second question' });
      const two = await generateText({ model: provider().responses(model), messages });
      expect(two.text).toBe(`${family} says: second question`);
      // The AI SDK sent the earlier answer by reference; the upstream got its text.
      const sent = lastSent(family);
      expect(sent).toContain('first question');
      expect(sent).toContain(`${family} says: first question`);
    });

    test(`streamed turns with item_reference (${family})`, async () => {
      const messages: ModelMessage[] = [{ role: 'user', content: 'stream one' }];
      const one = streamText({ model: provider().responses(model), messages });
      expect(await one.text).toBe(`${family} says: stream one`);
      messages.push(...(await one.response).messages, { role: 'user', content: 'stream two' });
      const two = streamText({ model: provider().responses(model), messages });
      expect(await two.text).toBe(`${family} says: stream two`);
      expect(lastSent(family)).toContain(`${family} says: stream one`);
    });

    test(`tool loop over stored responses (${family})`, async () => {
      const result = await generateText({
        model: provider().responses(model),
        prompt: 'call weather {"city":"Paris"}',
        tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'clear' }) }) },
        stopWhen: stepCountIs(3),
      });
      expect(result.steps.length).toBe(2);
      expect(result.text).toContain('tool said:');
      expect(result.text).toContain('clear');
    });
  }

  test('previous_response_id continues a stored response; GET, input_items and DELETE', async () => {
    const one = await generateText({ model: provider().responses('gpt-mini'), prompt: 'remember 42' });
    const id = one.providerMetadata?.openai?.responseId as string;
    expect(id).toStartWith('resp_');
    const two = await generateText({
      model: provider().responses('gpt-mini'),
      prompt: 'what number?',
      providerOptions: { openai: { previousResponseId: id } },
    });
    expect(two.text).toBe('openai says: what number?');
    expect(lastSent('openai')).toContain('openai says: remember 42');

    const client = sdk();
    const got = await client.responses.retrieve(id);
    expect(got.id).toBe(id);
    expect(got.output_text).toBe('openai says: remember 42');
    expect((got as { store?: boolean }).store).toBe(true);
    const items = await client.responses.inputItems.list(id);
    expect(items.data.length).toBe(1);
    expect(items.data[0]?.type).toBe('message');
    const page = await fetch(`${w.tg.url}/v1/responses/${id}/input_items?limit=1&order=asc`, {
      headers: { authorization: `Bearer ${w.p.apiKey}` },
    });
    const body = (await page.json()) as { object: string; has_more: boolean; first_id: string; last_id: string };
    expect(body).toMatchObject({ object: 'list', has_more: false });
    expect(body.first_id).toBe(body.last_id);

    await client.responses.delete(id);
    const again = await fetch(`${w.tg.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${w.p.apiKey}` } });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
    const cont = await client.responses.create({ model: 'gpt-mini', input: 'more', previous_response_id: id }).catch((e: unknown) => e);
    expect(cont).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test('store: false keeps nothing; an unknown item_reference is a 404, never ignored', async () => {
    const client = sdk();
    const r = await client.responses.create({ model: 'gpt-mini', input: 'ephemeral', store: false });
    expect((r as { store?: boolean }).store).toBe(false);
    const got = await fetch(`${w.tg.url}/v1/responses/${r.id}`, { headers: { authorization: `Bearer ${w.p.apiKey}` } });
    expect(got.status).toBe(404);
    const ref = await client.responses
      .create({
        model: 'gpt-mini',
        input: [
          { type: 'item_reference', id: 'msg_unknown' },
          { role: 'user', content: 'hi' },
        ],
      })
      .catch((e: unknown) => e);
    expect(ref).toBeInstanceOf(OpenAI.NotFoundError);
    expect((ref as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('input.0.id');
  });

  test("another project's key gets 404 for a stored response and its items", async () => {
    const client = sdk();
    const r = await client.responses.create({ model: 'gpt-mini', input: 'mine' });
    await w.tg.must('/admin.v1.AdminService/CreateProject', { customerId: 'acme', projectId: 'other' });
    const key = (await w.tg.must(apikeyOp('CreateApiKey'), {
      name: 'other',
      userId: 'u2',
      enterpriseContext: { customerId: 'acme', projectId: 'other' },
    })) as { apiKey: string };
    const res = await fetch(`${w.tg.url}/v1/responses/${r.id}`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    expect(res.status).toBe(404);
    const del = await fetch(`${w.tg.url}/v1/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key.apiKey}` } });
    expect(del.status).toBe(404);
    const mine = await fetch(`${w.tg.url}/v1/responses/${r.id}`, { headers: { authorization: `Bearer ${w.p.apiKey}` } });
    expect(mine.status).toBe(200);
  });
});
