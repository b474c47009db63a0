import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../core/errors.ts';
import { checkNesting, MAX_JSON_DEPTH } from './validate.ts';

/** The nesting limit checked on the request text before it is parsed (one counting pass; the path only for a refusal). */

const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const refusal = (text: string): GatewayError => {
  try {
    checkNesting(text);
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('accepted');
};

describe('checkNesting', () => {
  test('at the limit it passes; one deeper is a 400 naming the body', () => {
    expect(() => checkNesting(nested(MAX_JSON_DEPTH))).not.toThrow();
    const e = refusal(nested(MAX_JSON_DEPTH + 1));
    expect(e.status).toBe(400);
    expect(e.errorCode).toBe('nesting_too_deep');
    expect(e.message).toContain('The request body is nested too deeply');
  });

  test('brackets inside strings (escaped quotes too) do not count', () => {
    const s = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `"\\${'[{'.repeat(500)}` }] });
    expect(() => checkNesting(s)).not.toThrow();
  });

  test('the refusal names the parameter where the value became too deep', () => {
    const deep = JSON.parse(nested(MAX_JSON_DEPTH)) as unknown;
    const body = JSON.stringify({
      model: 'm',
      tools: [{ type: 'function', function: { name: 'f', description: 'a "quoted" [x]', parameters: { type: 'object', p: deep } } }],
    });
    const e = refusal(body);
    expect(e.param).toBe('tools.0.function.parameters');
    expect(e.message).toContain("'tools.0.function.parameters' is nested too deeply");
  });
});
