import { expect, test } from 'bun:test';
import { spliceFirstModel } from '../src/data-plane/splice-model.ts';

/** The relayed answer's model: the first `"model": "…"` member set to the client's name, as the former regular expression did. */
const REGEX = /"model"\s*:\s*"(?:[^"\\]|\\.)*"/;
const byRegex = (text: string, model: string): string => text.replace(REGEX, () => `"model":${JSON.stringify(model)}`);

test('the first model member is set to the client model; everything else is unchanged', () => {
  const cases = [
    '{"id":"x","model":"gpt-4o-mini-2024","choices":[]}',
    '{"id":"x", "model" :  "a\\"b\\\\", "usage":{}}',
    '{"model":null,"x":{"model":"nested"}}',
    '{"modelx":"no","model":"yes"}',
    '{"id":"no model here"}',
    '{"model":"é😀","object":"chat.completion"}',
    '{"text":"the \\"model\\": \\"fake\\"","model":"real"}',
    '{"model":"unterminated',
    '{"model"\n:\t"spaced"}',
  ];
  for (const c of cases) expect(spliceFirstModel(c, 'client/model "q"')).toBe(byRegex(c, 'client/model "q"'));
  expect(spliceFirstModel('{"model":"up"}', 'mine')).toBe('{"model":"mine"}');
});
