import { expect, test } from 'bun:test';
import { inferenceRelay, localInferenceUrl } from '../src/console/inference-relay.ts';

/**
 * The console's relay to the inference listener (console/inference-relay.ts) where a real gateway
 * cannot show it: a management-only process has no inference listener, and a wildcard bind is
 * reached on loopback. The relay with a listener is driven in Chromium (console-playground.test.ts).
 */

test('a management-only process answers the playground 503 in the inference error format, saying why', async () => {
  const res = await inferenceRelay(undefined).handle(
    new Request('http://gateway/console/inference/v1/chat/completions', { method: 'POST', body: '{}' }),
  );
  expect(res.status).toBe(503);
  const body = (await res.json()) as { error: { type: string; code: string; message: string } };
  expect(body.error.type).toBe('service_unavailable_error');
  expect(body.error.message).toContain('--role control');
});

test('a call the console does not make is refused before anything is forwarded', async () => {
  const res = await inferenceRelay('http://127.0.0.1:9').handle(
    new Request('http://gateway/console/inference/v1/files', { method: 'DELETE' }),
  );
  expect(res.status).toBe(404);
  expect(((await res.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
});

test('the inference listener is reached on loopback when it binds every address', () => {
  expect(localInferenceUrl('0.0.0.0', 8080, false)).toBe('http://127.0.0.1:8080');
  expect(localInferenceUrl('::', 8443, true)).toBe('https://[::1]:8443');
  expect(localInferenceUrl('10.0.0.5', 8080, false)).toBe('http://10.0.0.5:8080');
});
