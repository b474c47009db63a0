import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { admin, apikeyOp } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * OpenAI's Conversations API and Responses `conversation` (issue 26 defect 7) through the official
 * `openai` SDK, against both upstream families: the conversation's items are prepended to the
 * request, the turn's input and output appended; per project; `conversation` with
 * `previous_response_id` is refused as OpenAI refuses it.
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

const sdk = (apiKey = w.p.apiKey) => new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey, maxRetries: 0 });
const upstream = (family: 'openai' | 'anthropic') => (family === 'openai' ? w.oa : w.an);
const texts = (items: unknown[]): string => JSON.stringify(items);

describe('Conversations API', () => {
  test('create, retrieve, update, items list / create / retrieve / delete, delete', async () => {
    const c = await sdk().conversations.create({
      metadata: { topic: 'fruit' },
      items: [{ type: 'message', role: 'user', content: 'I like kumquats' }],
    });
    expect(c.id).toMatch(/^conv_/);
    expect(c.object).toBe('conversation');
    expect(c.metadata).toEqual({ topic: 'fruit' });
    expect(typeof c.created_at).toBe('number');

    const got = await sdk().conversations.retrieve(c.id);
    expect(got).toEqual(c);
    const updated = await sdk().conversations.update(c.id, { metadata: { topic: 'citrus' } });
    expect(updated.metadata).toEqual({ topic: 'citrus' });

    const added = await sdk().conversations.items.create(c.id, {
      items: [
        { type: 'message', role: 'assistant', content: 'Noted.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and limes' }] },
      ],
    });
    expect(added.data.length).toBe(2);
    const list = await sdk().conversations.items.list(c.id, { order: 'asc' });
    const items = list.data;
    expect(items.length).toBe(3);
    expect(items.map((i) => i.type)).toEqual(['message', 'message', 'message']);
    expect(texts(items)).toContain('I like kumquats');
    const firstId = items[0]?.id ?? '';
    expect(firstId).toMatch(/^msg_/);
    const one = await sdk().conversations.items.retrieve(firstId, { conversation_id: c.id });
    expect(one.id).toBe(firstId);
    // Default order is newest first, paged with `after` and `limit`.
    const desc = await sdk().conversations.items.list(c.id, { limit: 1 });
    expect(desc.data[0]?.id).toBe(items[2]?.id);
    expect(desc.has_more).toBe(true);

    const afterDelete = await sdk().conversations.items.delete(firstId, { conversation_id: c.id });
    expect(afterDelete.id).toBe(c.id);
    expect((await sdk().conversations.items.list(c.id)).data.length).toBe(2);
    const gone = await sdk()
      .conversations.items.retrieve(firstId, { conversation_id: c.id })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);

    const deleted = await sdk().conversations.delete(c.id);
    expect(deleted).toEqual({ id: c.id, object: 'conversation.deleted', deleted: true });
    expect(
      await sdk()
        .conversations.retrieve(c.id)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(OpenAI.NotFoundError);
  });

  for (const [model, family] of UPSTREAMS) {
    test(`responses.create with conversation prepends its items and appends the turn (${family})`, async () => {
      const c = await sdk().conversations.create({ items: [{ type: 'message', role: 'user', content: 'remember the word quince' }] });
      const r1 = await sdk().responses.create({ model, input: 'what was the word?', conversation: c.id });
      expect(r1.conversation?.id).toBe(c.id);
      const sent1 = JSON.stringify(upstream(family).requests.at(-1)?.body);
      expect(sent1).toContain('remember the word quince');
      expect(sent1).toContain('what was the word?');
      expect(sent1).not.toContain('conv_');

      // The `{id}` form; the conversation now holds both turns' input and output.
      const r2 = await sdk().responses.create({ model, input: 'say it again', conversation: { id: c.id } });
      const sent2 = JSON.stringify(upstream(family).requests.at(-1)?.body);
      expect(sent2).toContain('remember the word quince');
      expect(sent2).toContain(r1.output_text);
      const items = (await sdk().conversations.items.list(c.id, { order: 'asc', limit: 100 })).data;
      expect(items.length).toBe(5);
      expect(texts(items)).toContain('say it again');
      expect(texts(items)).toContain(r2.output_text);
      expect(items.at(-1)?.type).toBe('message');
      expect((items.at(-1) as { role?: string }).role).toBe('assistant');

      // Streamed turns append too.
      const stream = await sdk().responses.create({ model, input: 'stream a third', conversation: c.id, stream: true });
      for await (const _ of stream) {
        // drain
      }
      for (let i = 0; i < 50 && (await sdk().conversations.items.list(c.id, { limit: 100 })).data.length < 7; i++) await Bun.sleep(20);
      expect((await sdk().conversations.items.list(c.id, { limit: 100 })).data.length).toBe(7);
    });
  }

  test('conversation with previous_response_id is refused; an unknown conversation is a 404', async () => {
    const c = await sdk().conversations.create({});
    const prev = await sdk().responses.create({ model: 'claude-mini', input: 'x' });
    const both = await sdk()
      .responses.create({ model: 'claude-mini', input: 'y', conversation: c.id, previous_response_id: prev.id })
      .catch((e: unknown) => e);
    expect(both).toBeInstanceOf(OpenAI.BadRequestError);
    expect((both as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('mutually_exclusive_parameters');
    const unknown = await sdk()
      .responses.create({ model: 'gpt-mini', input: 'y', conversation: 'conv_nope' })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('conversation');
  });

  test('conversations are per project', async () => {
    const c = await sdk().conversations.create({ items: [{ type: 'message', role: 'user', content: 'mine' }] });
    await w.tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'other-conv' });
    const key = (await w.tg.must(apikeyOp('CreateApiKey'), {
      name: 'other',
      userId: 'u2',
      enterpriseContext: { customerId: 'acme', projectId: 'other-conv' },
    })) as { apiKey: string };
    const theirs = await sdk(key.apiKey)
      .conversations.retrieve(c.id)
      .catch((e: unknown) => e);
    expect(theirs).toBeInstanceOf(OpenAI.NotFoundError);
    const list = await sdk(key.apiKey)
      .conversations.items.list(c.id)
      .catch((e: unknown) => e);
    expect(list).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
