import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { Glob } from 'bun';
import { importGraph, ROOT } from './support/import-graph.ts';

/**
 * One of each (issue 39 item 5): the audit proof verifier, the SSE parser, the token estimator and
 * the stop-reason mapping are each written once in src/. A second copy of one of them (the shapes
 * below) fails here until it uses the one module, or is listed with the reason it is not a copy.
 */

const SOURCES = [...new Glob('src/**/*.{ts,tsx}').scanSync(ROOT)].filter((f) => !f.endsWith('.test.ts')).sort();
const holding = (re: RegExp): string[] => SOURCES.filter((f) => re.test(readFileSync(`${ROOT}/${f}`, 'utf8')));

test('audit:verify and the console check proofs with one verifier (WebCrypto): the only hashing and signature check of a client', () => {
  const g = importGraph('src/audit/verify.ts', 'src/console/app/proof.ts');
  for (const user of ['src/audit/verify.ts', 'src/console/app/proof.ts']) expect(g.edges.get(user)).toContain('src/audit/verifier.ts');
  // The RFC 9162 path walk and WebCrypto's hashing and signature checks stand in the verifier alone.
  expect(holding(/fn % 2 === 1|crypto\.subtle\.(verify|digest)\(/)).toEqual(['src/audit/verifier.ts']);
});

test('one SSE parser: nothing else of src/ splits events on blank lines or reads data lines', () => {
  expect(holding(/startsWith\('data:'\)|split\('\\n\\n'\)|indexOf\('\\n\\n'/)).toEqual([
    // The A2A relay passes each agent event on as the agent wrote it (its other lines kept) and reads its data only.
    'src/a2a/stream.ts',
    // The console's playground runs in the browser, which loads no module of the server.
    'src/console/app/playground.tsx',
    // A `data:` URL of a document, not an event.
    'src/data-plane/policies/guardrail-texts.ts',
    // The pass-through fast path: events in the plain form (`data: …`, LF only) are sliced where they
    // stand so a same-format relay can pass the bytes on; every other event goes to the parser.
    'src/data-plane/relay.ts',
    'src/formats/documents.ts',
    'src/providers/framing.ts',
  ]);
});

test('one token estimator: characters per token are counted in governance/token-bound.ts only', () => {
  expect(holding(/Math\.ceil\([^;\n]*\/ 4\)/)).toEqual([]);
  expect(holding(/export const (estimateTokens|inputTokenBound)\b/)).toEqual(['src/governance/token-bound.ts']);
});

test('mapStopReason is written once: every family lists its reasons in a table, none maps them in a switch', () => {
  expect(holding(/case '[^']+':\s*\n(\s*case '[^']+':\s*\n)*\s*return '(length|tool_calls|content_filter)';/)).toEqual([]);
  expect(holding(/export const mapStopReason\b/)).toEqual(['src/providers/stop-reason.ts']);
});
