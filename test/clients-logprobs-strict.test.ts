import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { startWorld, stopWorld, type World } from './support/provision.ts';
import { refusal } from './support/sdk-refusal.ts';

/**
 * Issue 26, defects 3 and 5, through the official SDKs: log probabilities toward a family that has
 * none are refused with a 400 naming the field (OpenAI honours them: passed through); Messages
 * structured output reaches OpenAI as strict `json_schema` (objects closed where the client left
 * them open), and a schema strict mode cannot take is refused naming the keyword.
 */

let w: World;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  w = await startWorld();
  openai = new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
}, 60_000);
afterAll(() => stopWorld(w));

describe('logprobs (defect 3)', () => {
  test('Chat logprobs / top_logprobs to Anthropic: 400 naming the field, streaming too; nothing reaches the upstream', async () => {
    const before = w.an.requests.length;
    const messages = [{ role: 'user' as const, content: 'x' }];
    expect(await refusal(() => openai.chat.completions.create({ model: 'claude-mini', logprobs: true, messages }))).toMatchObject({
      status: 400,
      param: 'logprobs',
    });
    expect(
      await refusal(() => openai.chat.completions.create({ model: 'claude-mini', logprobs: true, stream: true, messages })),
    ).toMatchObject({ status: 400, param: 'logprobs' });
    expect(await refusal(() => openai.chat.completions.create({ model: 'claude-mini', top_logprobs: 3, messages }))).toMatchObject({
      status: 400,
      param: 'top_logprobs',
    });
    expect(w.an.requests.length).toBe(before);
  });

  test('Responses top_logprobs / include logprobs to Anthropic: 400 naming the field', async () => {
    const before = w.an.requests.length;
    expect(await refusal(() => openai.responses.create({ model: 'claude-mini', input: 'x', top_logprobs: 2 }))).toMatchObject({
      status: 400,
      param: 'top_logprobs',
    });
    expect(
      await refusal(() => openai.responses.create({ model: 'claude-mini', input: 'x', include: ['message.output_text.logprobs'] })),
    ).toMatchObject({ status: 400, param: 'include.0' });
    expect(w.an.requests.length).toBe(before);
  });

  test('OpenAI honours them: Chat and Responses reach it as sent; logprobs: false is no request for them', async () => {
    await openai.chat.completions.create({
      model: 'gpt-mini',
      logprobs: true,
      top_logprobs: 2,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(w.oa.requests.at(-1)?.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    await openai.responses.create({ model: 'gpt-mini', input: 'x', top_logprobs: 2 });
    expect(w.oa.requests.at(-1)).toMatchObject({ path: '/v1/responses', body: { top_logprobs: 2 } });
    const res = await openai.chat.completions.create({ model: 'claude-mini', logprobs: false, messages: [{ role: 'user', content: 'x' }] });
    expect(res.choices[0]?.message.content).toBe('anthropic says: x');
  });
});

const schema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        properties: { date: { type: 'string', format: 'date' }, temp: { type: 'number' } },
        required: ['date', 'temp'],
      },
    },
  },
  required: ['city', 'days'],
} as const;

type SentFormat = { response_format?: { type?: string; json_schema?: { strict?: boolean; schema?: Record<string, unknown> } } };

describe('Messages structured output toward OpenAI (defect 5)', () => {
  test('output_config.format → json_schema with strict: true, every object closed (streaming too)', async () => {
    w.oa.script(() => ({ text: '{"city":"Oslo","days":[]}', usage: { input: 10, output: 8 } }));
    try {
      const res = await anthropic.messages.create({
        model: 'gpt-mini',
        max_tokens: 500,
        output_config: { format: { type: 'json_schema', schema } },
        messages: [{ role: 'user', content: 'weather' }],
      });
      expect(res.content[0]).toMatchObject({ type: 'text', text: '{"city":"Oslo","days":[]}' });
      const sent = (w.oa.requests.at(-1)?.body ?? {}) as SentFormat;
      expect(sent.response_format?.type).toBe('json_schema');
      expect(sent.response_format?.json_schema?.strict).toBe(true);
      expect(sent.response_format?.json_schema?.schema).toEqual({
        ...schema,
        additionalProperties: false,
        properties: {
          ...schema.properties,
          days: { type: 'array', items: { ...schema.properties.days.items, additionalProperties: false } },
        },
      });
      await anthropic.messages
        .stream({
          model: 'gpt-mini',
          max_tokens: 500,
          output_config: { format: { type: 'json_schema', schema } },
          messages: [{ role: 'user', content: 'weather' }],
        })
        .finalMessage();
      expect(((w.oa.requests.at(-1)?.body ?? {}) as SentFormat).response_format?.json_schema?.strict).toBe(true);
    } finally {
      w.oa.script(undefined);
    }
  });

  test('a schema strict mode cannot take is refused naming the keyword; Anthropic takes it as sent', async () => {
    const before = w.oa.requests.length;
    const send = (s: Record<string, unknown>, model = 'gpt-mini') =>
      anthropic.messages.create({
        model,
        max_tokens: 500,
        output_config: { format: { type: 'json_schema', schema: s } },
        messages: [{ role: 'user', content: 'x' }],
      });
    const optional = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'] };
    expect(await refusal(() => send(optional))).toMatchObject({ status: 400, param: 'output_config.format.schema.required' });
    const pattern = {
      type: 'object',
      properties: { m: { type: 'object', patternProperties: { '^x': { type: 'string' } } } },
      required: ['m'],
    };
    expect(await refusal(() => send(pattern))).toMatchObject({
      status: 400,
      param: 'output_config.format.schema.properties.m.patternProperties',
    });
    const uri = { type: 'object', properties: { u: { type: 'string', format: 'uri' } }, required: ['u'] };
    expect(await refusal(() => send(uri))).toMatchObject({ status: 400, param: 'output_config.format.schema.properties.u.format' });
    const open = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: true };
    expect(await refusal(() => send(open))).toMatchObject({ status: 400, param: 'output_config.format.schema.additionalProperties' });
    expect(w.oa.requests.length).toBe(before);
    await send(optional, 'claude-mini');
    expect(w.an.requests.at(-1)?.body.output_config).toEqual({ format: { type: 'json_schema', schema: optional } });
  });
});
