import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Messages threads as @anthropic-ai/sdk 1.x sends them (`beta.messages.thread`, the default
 * `beta.messages.toolRunner`): `thread: {type: "create"}`, then `{type: "continue",
 * previous_message_id}` with only the new messages. The gateway serves the thread from its
 * conversation store: every upstream gets the whole conversation, never only the new turn.
 */

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

const client = () => new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
const UPSTREAMS = [
  ['claude-mini', 'anthropic'],
  ['gpt-mini', 'openai'],
] as const;

describe('beta.messages.thread', () => {
  for (const [model, family] of UPSTREAMS) {
    test(`a continue carries the stored conversation to ${family}`, async () => {
      const up = family === 'openai' ? w.oa : w.an;
      const thread = client().beta.messages.thread({ model, max_tokens: 256, system: 'be brief' });
      const first = await thread.send({ role: 'user', content: 'first turn' });
      expect(first.content[0]).toMatchObject({ type: 'text', text: `${family} says: first turn` });
      const second = await thread.send({ role: 'user', content: 'second turn' });
      expect(second.content[0]).toMatchObject({ type: 'text', text: `${family} says: second turn` });
      const sent = JSON.stringify(up.requests.at(-1)?.body);
      expect(sent).toContain('first turn');
      expect(sent).toContain(`${family} says: first turn`);
      expect(sent).toContain('be brief');
      expect(sent).not.toContain('"thread"');
    });
  }

  test('an unknown previous_message_id is the 404 thread_not_found the SDK recovers from', async () => {
    const res = await fetch(`${w.tg.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': w.p.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-mini',
        max_tokens: 10,
        thread: { type: 'continue', previous_message_id: 'msg_nope' },
        messages: [{ role: 'user', content: 'x' }],
      }),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { type: string; error: { type: string; details: { error_code: string } } };
    expect(body.error.type).toBe('not_found_error');
    expect(body.error.details.error_code).toBe('thread_not_found');
  });
});

describe('beta.messages.toolRunner (threaded by default)', () => {
  for (const [model, family] of UPSTREAMS) {
    for (const stream of [false, true]) {
      test(`tool loop against ${family}${stream ? ', streaming' : ''}: the tool result reaches the upstream with its tool use`, async () => {
        const weather = betaTool({
          name: 'weather',
          description: 'the weather in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          run: (input) => `sunny in ${input.city}`,
        });
        const runner = client().beta.messages.toolRunner({
          model,
          max_tokens: 256,
          messages: [{ role: 'user', content: 'call weather {"city":"Oslo"}' }],
          tools: [weather],
          ...(stream ? { stream: true } : {}),
        });
        const final = await runner.runUntilDone();
        expect(final.content[0]).toMatchObject({ type: 'text', text: 'tool said: sunny in Oslo' });
      });
    }
  }
});
