import { describe, expect, test } from 'bun:test';
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ConfigDocument, ConfigDocumentSchema } from '../src/api/config-document.ts';
import { buildSnapshot } from '../src/propagation/build.ts';
import { mapSecrets, openPull, sealDocument } from '../src/propagation/seal.ts';
import { goldenJson } from '../src/providers/golden.ts';
import { getAdapter } from '../src/providers/registry.ts';
import { snapshotView } from './support/snapshot-view.ts';

/**
 * Golden fixtures of propagation: test/fixtures/propagation/<case>/document.json (the data planes'
 * configuration document as the management plane builds it) → buildSnapshot → snapshot.json (the
 * immutable snapshot a data plane serves from, as stable plain data: test/support/snapshot-view.ts).
 * Each case also travels sealed, as to a separate data plane (seal.ts), and must build the same
 * snapshot after it is opened, with none of its secrets readable on the way.
 * `UPDATE_GOLDEN=1 bun test test/propagation-golden.test.ts` rewrites the snapshots (review the diff!).
 */

const FIXTURES = join(import.meta.dir, 'fixtures', 'propagation');
/** The build time every case is built at (`builtAt`). */
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const DocumentCheck = TypeCompiler.Compile(ConfigDocumentSchema);

const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

const documentOf = (name: string): ConfigDocument => {
  const doc: unknown = JSON.parse(readFileSync(join(FIXTURES, name, 'document.json'), 'utf8'));
  if (!DocumentCheck.Check(doc))
    throw new Error(`${name}/document.json does not match the document schema: ${DocumentCheck.Errors(doc).First()?.path}`);
  return doc;
};

/** Every string the document schema declares secret (a JSON secret: each of its string values). */
const secretsOf = (doc: ConfigDocument): string[] => {
  const out: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) collect(x);
  };
  mapSecrets(ConfigDocumentSchema, doc, (v) => {
    collect(v);
    return v;
  });
  return out;
};

const { publicKey, privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

describe('propagation golden: document.json → buildSnapshot → snapshot.json', () => {
  for (const name of cases) {
    test(name, async () => {
      const doc = documentOf(name);
      const view = snapshotView(buildSnapshot(doc, getAdapter, NOW));
      expect(view).toEqual(goldenJson(join(FIXTURES, name, 'snapshot.json'), view) as typeof view);

      const sealed = JSON.stringify(await sealDocument(doc, publicKey));
      const secrets = secretsOf(doc);
      for (const s of secrets) expect(JSON.stringify(doc)).toContain(s);
      expect(secrets.filter((s) => sealed.includes(s))).toEqual([]);
      const { doc: opened } = await openPull(JSON.parse(sealed), privateKey);
      expect(snapshotView(buildSnapshot(opened, getAdapter, NOW))).toEqual(view);
    });
  }
});

describe('propagation golden: the cases cover the document', () => {
  const docs = cases.map(documentOf);
  /** A section's rows over every case. */
  const all = <T>(section: (d: ConfigDocument) => readonly T[] | undefined): T[] => docs.flatMap((d) => [...(section(d) ?? [])]);

  test('every section of the document is present and non-empty in some case, and absent (optional) in another', () => {
    const sections = Object.keys(ConfigDocumentSchema.properties) as (keyof ConfigDocument)[];
    const filled = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : v !== undefined);
    const empty = sections.filter((k) => k !== 'revision' && !docs.some((d) => filled(d[k])));
    expect(empty).toEqual([]);
    const required = new Set<string>(ConfigDocumentSchema.required ?? []);
    const optional = sections.filter((k) => !required.has(k));
    expect(optional.length).toBeGreaterThan(3);
    expect(optional.filter((k) => docs.every((d) => d[k] !== undefined))).toEqual([]);
  });

  test('routes: several priorities, weights, disabled, unresolvable and empty; the global fallback', () => {
    const routes = all((d) => d.routes);
    expect(routes.some((r) => new Set(r.targets.map((t) => t.priority)).size > 1 && r.targets.some((t) => t.weight > 1))).toBe(true);
    expect(routes.some((r) => !r.enabled)).toBe(true);
    expect(routes.some((r) => r.targets.length === 0)).toBe(true);
    expect(routes.some((r) => r.timeoutMs === null) && routes.some((r) => r.timeoutMs !== null)).toBe(true);
    expect(all((d) => d.settings).some((s) => s.name === 'global-fallback')).toBe(true);
  });

  test('governance: every setting, budget period, guardrail kind, stage and action', () => {
    expect(new Set(all((d) => d.settings).map((s) => s.name))).toEqual(
      new Set(['rate-limit', 'trace-content', 'record-retention', 'response-cache', 'global-fallback']),
    );
    expect(new Set(all((d) => d.budgets).map((b) => b.period))).toEqual(new Set(['day', 'week', 'month', 'total']));
    const g = all((d) => d.guardrails);
    expect(new Set(g.map((r) => r.kind))).toEqual(new Set(['regex', 'pii', 'max_input_tokens']));
    expect(new Set(g.map((r) => r.stage))).toEqual(new Set(['input', 'output', 'both']));
    expect(new Set(g.map((r) => r.action))).toEqual(new Set(['block', 'redact', 'flag']));
  });

  test('MCP: both transports and every auth type; project and member credentials', () => {
    const servers = all((d) => d.mcpServers);
    expect(new Set(servers.map((s) => s.transport))).toContain('sse');
    expect(new Set(servers.map((s) => s.transport))).toContain('streamable-http');
    expect(new Set(servers.map((s) => s.authType))).toEqual(new Set(['none', 'bearer', 'header']));
    const creds = all((d) => d.mcpCredentials);
    expect(creds.some((c) => c.userId === '') && creds.some((c) => c.userId !== '')).toBe(true);
  });

  test('secrets: every kind of secret field carries one (connection keys and options, BYOK, MCP, telemetry exports)', () => {
    const secrets = docs.flatMap(secretsOf);
    for (const s of [
      'sk-golden-openai-main',
      'org-golden',
      'sk-golden-byok-new',
      'tok-golden-tickets-catalog',
      'tok-golden-tickets-alice',
      'Bearer otel-golden-token',
      'otel-golden-local',
    ])
      expect(secrets).toContain(s);
  });
});
