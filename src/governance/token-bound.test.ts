import { expect, test } from 'bun:test';
import { estimateTokens, inputTokenBound } from './token-bound.ts';

test('ASCII counts 4 characters per token, rounded up', () => {
  expect(inputTokenBound('')).toBe(0);
  expect(inputTokenBound('abcd')).toBe(1);
  expect(inputTokenBound('abcde')).toBe(2);
  expect(inputTokenBound('{"content":"hello world"}')).toBe(Math.ceil(25 / 4));
});

test('every non-ASCII code unit counts one token: CJK, accents, Cyrillic, emoji (two units)', () => {
  expect(inputTokenBound('预算'.repeat(20_000))).toBe(40_000);
  expect(inputTokenBound('héllo')).toBe(1 + 1);
  expect(inputTokenBound('привет')).toBe(6);
  expect(inputTokenBound('😀😀')).toBe(4);
  // Mixed: 9 ASCII (3 tokens) + 2 CJK.
  expect(inputTokenBound('abcd世界efgh!')).toBe(Math.ceil(9 / 4) + 2);
});

test('CJK escaped in the JSON (\\u4e2d) still counts at least one token per character', () => {
  const text = '中文'.repeat(1000);
  const escaped = JSON.stringify(text).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  expect(inputTokenBound(escaped)).toBeGreaterThanOrEqual(text.length);
});

test('the estimate counts 4 characters per token, rounded up; the input bound agrees with it on ASCII and exceeds it elsewhere', () => {
  expect([0, 1, 4, 5, 8, 9].map(estimateTokens)).toEqual([0, 1, 1, 2, 2, 3]);
  expect(inputTokenBound('x'.repeat(4001))).toBe(estimateTokens(4001));
  expect(inputTokenBound('预'.repeat(400))).toBeGreaterThan(estimateTokens(400));
});
