import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { Glob } from 'bun';
import { importGraph, ROOT } from './support/import-graph.ts';

/**
 * One typed management client (issue 23 item 2): src/api/client.ts is the only code of src/ and
 * iac/ that calls the management plane. An HTTP call anywhere else must be listed here with the
 * reason it is not a management client; a new `fetch(` (or HTTP client package) fails this test
 * until it is either routed through `ManagementClient` or listed.
 */

const SOURCES = ['src', 'iac'].flatMap((d) =>
  [...new Glob('**/*.ts').scanSync(`${ROOT}/${d}`)]
    .map((f) => `${d}/${f}`)
    // Unit tests beside the code are tests, not clients (as is test/support).
    .filter((f) => !f.includes('node_modules/') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts')),
);

/** Files that may call `fetch`, and why none of them is a client of the management plane. */
const HTTP_CALLERS: Record<string, string> = {
  'src/api/client.ts': 'the one management client (Connect JSON and the data plane protocol)',
  'src/data-plane/upstream.ts': "the data plane's calls to upstream LLM providers (and their token endpoints)",
  'src/audit/otlp.ts': "audit forwarding: entries sent to the customer's OTLP/HTTP collector (a telemetry sink)",
  'src/control-plane/openapi-ui.ts': "the API explorer page's browser script (served as HTML; it sends what the reader typed)",
  'src/console/app/proof.ts':
    "the console's audit proof check reads the public key document /.well-known/jwks.json (not an operation) to verify a checkpoint's signature",
  'src/mcp/upstream.ts': "the MCP gateway's calls to upstream MCP servers (the SDK's transports, redirects not followed)",
  'src/mcp/serve-modern.ts': "the v2 SDK handler's own `fetch(req)` method (serves a 2026-07-28 request; no HTTP call)",
  'src/a2a/card.ts': "an A2A agent's card fetched from its URL (upstream address rule, no redirects, bounded)",
  'src/a2a/serve.ts': "the A2A gateway's calls to a catalog agent's JSON-RPC URL (upstream address rule, no redirects)",
  'src/console/inference-relay.ts':
    "the console playground's relay to the same process's inference listener (four inference calls, the caller's key passed through)",
  'src/data-plane/guardrail-vendors/call.ts': "provider guardrails' calls to the vendor's API (upstream address rule, no redirects)",
};

const FETCH = /\bfetch\s*\(/;
const HTTP_PACKAGES = ['node:http', 'node:https', 'http', 'https', 'undici', 'axios', 'node-fetch', 'got', 'ky'];

test('fetch( appears only in the management client and in the listed non-management callers', () => {
  expect(SOURCES.length).toBeGreaterThan(200);
  const callers = SOURCES.filter((f) => FETCH.test(readFileSync(`${ROOT}/${f}`, 'utf8'))).sort();
  expect(callers).toEqual(Object.keys(HTTP_CALLERS).sort());
});

test('no HTTP client package is imported by src/ or iac/', () => {
  const g = importGraph(...SOURCES);
  expect(g.packages.filter((p) => HTTP_PACKAGES.includes(p))).toEqual([]);
});

test("the data plane's pull, record shipping and stored conversations, audit:verify and the Terraform provider import the client", () => {
  const g = importGraph(...SOURCES);
  const users = [...g.edges].filter(([, targets]) => targets.includes('src/api/client.ts')).map(([f]) => f);
  expect(users).toEqual(
    expect.arrayContaining([
      'src/data-plane/remote/pull.ts',
      'src/data-plane/remote/remote-sink.ts',
      'src/data-plane/remote/conversations.ts',
      'src/audit/verify.ts',
      'iac/provider/client.ts',
    ]),
  );
});
