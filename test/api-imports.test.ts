import { expect, test } from 'bun:test';
import { importGraph } from './support/import-graph.ts';

/** The API module is data and a client: no server, no store, no plane (architecture.md, issue 23). */
const NOT_IN_API = [
  'src/store/',
  'src/control-plane/',
  'src/data-plane/',
  'src/propagation/',
  'src/providers/',
  'src/records/',
  'src/app',
  'src/main.ts',
];

test('src/api (operation specs, resources, data plane protocol, client) imports no store, handler, plane or provider code, and no server framework', () => {
  const g = importGraph('src/api/index.ts', 'src/api/client.ts', 'src/api/resources.ts', 'src/api/dataplane.ts');
  expect(g.files.filter((f) => NOT_IN_API.some((p) => f.startsWith(p)))).toEqual([]);
  expect(
    g.packages.filter((p) => p === 'elysia' || p.startsWith('drizzle-orm') || p === 'postgres' || p.startsWith('@electric-sql/')),
  ).toEqual([]);
  expect(g.files).toContain('src/api/ops/guardrails.ts');
  // The data plane protocol and its payload, the configuration document, are API data too.
  expect(g.files).toContain('src/api/config-document.ts');
});
