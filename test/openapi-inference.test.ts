import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { INFERENCE_ENDPOINTS, INFERENCE_TAG } from '../src/api/inference-endpoints.ts';
import { startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The inference endpoints appear in the management listener's OpenAPI document although Bun.serve
 * serves them (issue 40, decision 3: bench/framework-floor.ts): the document's list and the route
 * table name the same paths, and every documented method is served (not 405, not unknown).
 */
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.stop();
});

/** Each documented operation: its OpenAPI path (a wildcard route's own) and method. */
const documented = (): { path: string; method: string }[] =>
  Object.entries(INFERENCE_ENDPOINTS).flatMap(([route, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      path: 'path' in op && typeof op.path === 'string' ? op.path : route.replace(/:(\w+)/g, '{$1}'),
      method,
    })),
  );

describe('the inference endpoints in the OpenAPI document', () => {
  test('the document lists every route of the inference listener beside the management operations', async () => {
    const res = await fetch(`${t.adminUrl}/openapi/json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { tags?: string[]; summary?: string }>> };
    // The route table of data-plane/server.ts `satisfies` Record<InferenceRoute, …>: tsc holds it to this list.
    const paths = documented().map((d) => d.path);
    expect(paths).toContain('/v1/chat/completions');
    expect(paths).toContain('/v1/files/{id}');
    expect(paths).toContain('/model/{modelId}/{operation}');
    for (const path of paths) {
      const item = doc.paths[path];
      expect(item, path).toBeDefined();
      for (const op of Object.values(item ?? {})) {
        expect(op.tags).toEqual([INFERENCE_TAG]);
        expect(op.summary?.length).toBeGreaterThan(3);
      }
    }
    // The management operations are still there beside them.
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin.v1.AdminService/'))).toBe(true);
  });

  test('every documented method is served by the inference listener (no 405, no unknown endpoint)', async () => {
    for (const { path, method } of documented()) {
      const url = `${t.url}${path.replace(/\{\w+\}/g, 'x')}`;
      {
        const res = await fetch(url, { method: method.toUpperCase(), ...(method === 'get' || method === 'delete' ? {} : { body: '{}' }) });
        const body = await res.text();
        expect(res.status, `${method} ${path}`).not.toBe(405);
        expect(body, `${method} ${path}`).not.toContain('unknown_endpoint');
        expect(res.headers.get('x-request-id'), `${method} ${path}`).toBeTruthy();
      }
    }
  });
});
