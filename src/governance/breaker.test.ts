import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../core/errors.ts';
import { Breakers, targetKey } from './breaker.ts';
import type { CircuitBreakerSetting } from './setting-values.ts';

/** The breaker's state machine on an injected clock (the request path is test/circuit-breaker.test.ts). */

const S: CircuitBreakerSetting = { failures: 3, windowSeconds: 10, openSeconds: 5 };
const conn = { id: 'c1', name: 'main' };
const target = (model: string, byok?: true) => ({
  key: targetKey(conn.id, model),
  upstreamModel: model,
  connection: conn,
  ...(byok ? { byok } : {}),
});
const e503 = new GatewayError({ kind: 'unavailable', message: 'down', retryable: true, upstreamStatus: 503 });
const auth = new GatewayError({
  kind: 'upstream_error',
  status: 502,
  errorCode: 'upstream_auth_failed',
  message: 'refused',
  retryable: true,
});
const bad400 = new GatewayError({ kind: 'invalid_request', message: 'bad', retryable: false });

const clock = () => {
  const c = { now: 1_000_000 };
  return { c, b: new Breakers(() => c.now) };
};

describe('circuit breaker state machine', () => {
  test('failures outside the window do not add up; inside they open it', () => {
    const { c, b } = clock();
    const t = target('m');
    b.failed(t, e503, S);
    c.now += 11_000;
    b.failed(t, e503, S);
    b.failed(t, e503, S);
    expect(b.circuit(t.key)?.state).toBe('CLOSED');
    b.failed(t, e503, S);
    expect(b.circuit(t.key)?.state).toBe('OPEN');
    expect(b.admit(t, S)).toBe(5_000);
  });

  test('one probe at a time after openSeconds; a failed probe opens it again; a released probe lets the next one through', () => {
    const { c, b } = clock();
    const t = target('m');
    for (let i = 0; i < 3; i++) b.failed(t, e503, S);
    c.now += 5_000;
    expect(b.admit(t, S)).toBe(0);
    expect(b.circuit(t.key)?.state).toBe('HALF_OPEN');
    expect(b.admit(t, S)).toBeGreaterThan(0);
    b.released(t);
    expect(b.admit(t, S)).toBe(0);
    b.failed(t, e503, S);
    expect(b.circuit(t.key)?.state).toBe('OPEN');
    c.now += 5_000;
    expect(b.admit(t, S)).toBe(0);
    b.succeeded(t, 40);
    expect(b.circuit(t.key)?.state).toBe('CLOSED');
    expect(b.takeMoved().map((m) => m.to)).toEqual(['OPEN', 'HALF_OPEN', 'OPEN', 'HALF_OPEN', 'CLOSED']);
  });

  test('a non-retryable failure counts nothing; a credential failure benches every target of the connection', () => {
    const { b } = clock();
    for (let i = 0; i < 5; i++) b.failed(target('m'), bad400, S);
    expect(b.circuit(target('m').key)?.state).toBe('CLOSED');
    b.failed(target('m'), auth, S);
    expect(b.admit(target('other-model'), S)).toBeGreaterThan(0);
    expect(b.circuit(conn.id)).toMatchObject({ state: 'OPEN', reason: 'auth' });
  });

  test("a caller's own (BYOK) key refused benches nobody", () => {
    const { b } = clock();
    b.failed(target('m', true), auth, S);
    expect(b.circuit(conn.id)).toBeUndefined();
    expect(b.admit(target('m'), S)).toBe(0);
  });

  test('429 with Retry-After cools down at most 60 s, then closes; without Retry-After nothing is remembered', () => {
    const { c, b } = clock();
    const t = target('m');
    b.failed(t, new GatewayError({ kind: 'rate_limit', message: 'slow', retryable: true }), S);
    expect(b.admit(t, S)).toBe(0);
    b.failed(t, new GatewayError({ kind: 'rate_limit', message: 'slow', retryable: true, retryAfterSeconds: 600 }), S);
    expect(b.circuit(t.key)).toMatchObject({ state: 'COOLING', reason: 'rate_limited' });
    expect(b.admit(t, S)).toBe(60_000);
    expect(b.benched).toBe('COOLING');
    c.now += 60_000;
    expect(b.admit(t, S)).toBe(0);
    expect(b.circuit(t.key)?.state).toBe('CLOSED');
  });

  test('health: failures within the window, p50 of recent answers, last error', () => {
    const { b } = clock();
    const t = target('m');
    for (const ms of [10, 30, 20]) b.succeeded(t, ms);
    b.failed(t, e503, S);
    expect(b.health()[0]).toMatchObject({ connection: 'main', upstreamModel: 'm', state: 'CLOSED', failures: 1, latencyMsP50: 20 });
    expect(b.health()[0]?.lastError).toContain('503');
  });
});
