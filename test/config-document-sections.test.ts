import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { ConfigDocumentSchema, SEALED_PATTERN, SealedConfigDocumentSchema } from '../src/api/config-document.ts';
import { DECLARATIONS } from '../src/api/registry.ts';
import { SecretBox } from '../src/core/secrets.ts';
import { loadConfigDocument } from '../src/propagation/load.ts';
import { batchedSelect } from '../src/propagation/loader.ts';
import { isSecretNode } from '../src/propagation/seal.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Issue 23 item 3: a resource's section of the data planes' document is declared with the resource
 * (`document` of its declaration in src/api/ops/*) and read by its loader
 * (src/propagation/sections/*). The document's schema is composed from the declarations, in both
 * forms (secrets plaintext / sealed), and a loaded document carries every declared section, read
 * within the load's scope.
 */

const declared: { resource: string; section: string; optional: boolean }[] = Object.entries(DECLARATIONS).flatMap(([resource, d]) =>
  'document' in d ? [{ resource, section: d.document.section, optional: 'optional' in d.document }] : [],
);
/** A form's properties by section name. */
const sectionsOf = (schema: typeof ConfigDocumentSchema | typeof SealedConfigDocumentSchema): Record<string, TSchema> => schema.properties;

describe('the document schema is composed from the declarations', () => {
  test('every declared section is a section of both forms, required unless declared optional', () => {
    expect(declared.map((d) => d.section).sort()).toEqual(
      [
        'a2aAgents',
        'budgets',
        'byokKeys',
        'catalog',
        'connections',
        'guardrails',
        'mcpCredentials',
        'mcpProfiles',
        'mcpServers',
        'projectA2aAgents',
        'projectMembers',
        'projectModels',
        'projectProviders',
        'routes',
        'settings',
      ].sort(),
    );
    for (const schema of [ConfigDocumentSchema, SealedConfigDocumentSchema]) {
      for (const d of declared) {
        const s = sectionsOf(schema)[d.section];
        expect(s !== undefined && KindGuard.IsArray(s) && KindGuard.IsObject(s.items)).toBe(true);
        const required: readonly string[] = schema.required ?? [];
        expect(required.includes(d.section)).toBe(!d.optional);
      }
    }
  });

  test("a declared row's secret fields are secret in the plaintext form and sealed values in the sealed form", () => {
    const sealedPattern = (s: TSchema): boolean =>
      s.pattern === SEALED_PATTERN || (KindGuard.IsUnion(s) && s.anyOf.some((m) => m.pattern === SEALED_PATTERN));
    const secretOf = (s: TSchema): boolean => isSecretNode(s) || (KindGuard.IsUnion(s) && s.anyOf.some(isSecretNode));
    const found: string[] = [];
    for (const d of declared) {
      const plain = sectionsOf(ConfigDocumentSchema)[d.section];
      const sealed = sectionsOf(SealedConfigDocumentSchema)[d.section];
      if (
        !plain ||
        !sealed ||
        !KindGuard.IsArray(plain) ||
        !KindGuard.IsObject(plain.items) ||
        !KindGuard.IsArray(sealed) ||
        !KindGuard.IsObject(sealed.items)
      )
        throw new Error(d.section);
      const sealedFields: Record<string, TSchema> = sealed.items.properties;
      expect(Object.keys(sealedFields)).toEqual(Object.keys(plain.items.properties));
      for (const [field, s] of Object.entries(plain.items.properties)) {
        const other = sealedFields[field];
        if (!other) throw new Error(`${d.section}.${field}`);
        expect(sealedPattern(other)).toBe(secretOf(s));
        if (secretOf(s)) found.push(`${d.section}.${field}`);
      }
    }
    expect(found.sort()).toEqual([
      'a2aAgents.authValue',
      'byokKeys.secret',
      'connections.apiKey',
      'connections.options',
      'guardrails.authValue',
      'guardrails.providerOptions',
      'mcpCredentials.authValue',
      'mcpServers.authValue',
    ]);
  });
});

describe('the loaders', () => {
  let tg: TestGateway;
  let secrets: SecretBox;
  let customerUuid = '';
  let projectUuid = '';

  beforeAll(async () => {
    const kek = 'Bb5eLt5kYJ0Vq2W8mZ3x9N4pR7sT1uV6wX0yZ2aC4dE=';
    tg = await startTestGateway({ GATEWAY_KEK: kek });
    secrets = new SecretBox(kek);
    customerUuid = String(
      ((await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' })).customer as Record<string, unknown>).id,
    );
    projectUuid = String(
      ((await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' })).project as Record<string, unknown>).id,
    );
    const addr = { customerId: 'acme', projectId: 'web' };
    await tg.must(admin('CreateGuardrail'), { ...addr, name: 'g1', stage: 'input', kind: 'regex', pattern: 'x+', action: 'block' });
    await tg.must(admin('CreateMcpServer'), {
      serverId: 'gh',
      url: 'https://mcp.example.com/gh',
      authType: 'bearer',
      authValue: 'catalog-secret',
    });
    await tg.must(admin('AddProjectMcpServer'), { ...addr, serverId: 'gh' });
    await tg.must(admin('CreateMcpProfile'), { ...addr, profileId: 'tools', servers: [{ serverId: 'gh' }] });
    await tg.must(admin('CreateProviderConnection'), { ...addr, name: 'c1', provider: 'openai', apiKey: 'sk-secret-web' });
  }, 120_000);

  afterAll(async () => {
    await tg?.stop();
  });

  test('a loaded document carries every declared section, each read by its loader', async () => {
    const doc = await loadConfigDocument(tg.gw.store.db, secrets);
    for (const d of declared) expect(Object.keys(doc)).toContain(d.section);
    expect(doc.guardrails.map((g) => [g.projectUuid, g.name, g.pattern])).toEqual([[projectUuid, 'g1', 'x+']]);
    expect(doc.mcpProfiles?.map((p) => [p.profileId, p.servers.map((s) => s.serverId)])).toEqual([['tools', ['gh']]]);
    expect(doc.mcpServers?.map((s) => s.authValue)).toEqual(['catalog-secret']);
    expect(doc.connections.map((c) => c.apiKey)).toEqual(['sk-secret-web']);
  });

  test("a separate data plane's scope reaches every loader: another customer's projects list none of its rows", async () => {
    const other = await loadConfigDocument(tg.gw.store.db, secrets, false, { customerUuid, projectUuids: [] });
    expect(other.projects).toEqual([]);
    expect([other.guardrails, other.connections, other.mcpProfiles, other.mcpServers, other.settings, other.routes]).toEqual([
      [],
      [],
      [],
      [],
      [],
      [],
    ]);
    expect(other.catalog.length).toBe((await loadConfigDocument(tg.gw.store.db, secrets)).catalog.length);
    const own = await loadConfigDocument(tg.gw.store.db, secrets, false, { customerUuid, projectUuids: [projectUuid] });
    expect(own.guardrails.map((g) => g.name)).toEqual(['g1']);
    expect(own.mcpProfiles?.length).toBe(1);
  });
});

describe('batchedSelect', () => {
  /** A select stand-in: gives `rows` (or fails) when awaited, and counts how often it is run. */
  const query = (rows: unknown[] | Error, runs: { n: number }) => ({
    toSQL: () => ({ sql: 'select 1', params: [] }),
    _: { selectedFields: {} },
    // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose: it stands in for a drizzle select, which is awaited.
    then: <A, B>(
      ok?: ((v: unknown[]) => A | PromiseLike<A>) | null,
      fail?: ((e: unknown) => B | PromiseLike<B>) | null,
    ): Promise<A | B> => {
      runs.n++;
      const p: Promise<unknown[]> = rows instanceof Error ? Promise.reject(rows) : Promise.resolve(rows);
      return p.then(ok, fail);
    },
  });

  test('selects asked for in one tick run together and each caller gets its own rows', async () => {
    const select = batchedSelect(undefined);
    const runs = { n: 0 };
    const a = select([query([1], runs), query([2, 3], runs)]);
    const b = select([query(['x'], runs)]);
    expect(runs.n).toBe(0);
    expect(await Promise.all([a, b])).toEqual([[[1], [2, 3]], [['x']]]);
    expect(runs.n).toBe(3);
    expect(await select([query([4], runs)])).toEqual([[4]]);
  });

  test('a failing select fails every caller of its batch, none left pending', async () => {
    const select = batchedSelect(undefined);
    const runs = { n: 0 };
    const a = select([query([1], runs)]);
    const b = select([query(new Error('boom'), runs)]);
    expect(await Promise.allSettled([a, b])).toEqual([
      { status: 'rejected', reason: new Error('boom') },
      { status: 'rejected', reason: new Error('boom') },
    ]);
  });
});
