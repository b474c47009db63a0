import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, count, eq, isNull } from 'drizzle-orm';
import { generateKek, SecretBox } from '../src/core/secrets.ts';
import { directStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { buildSnapshot } from '../src/propagation/build.ts';
import { currentRevision, loadConfigDocument } from '../src/propagation/load.ts';
import { getAdapter } from '../src/providers/registry.ts';
import { openStore, type Store, type StoreTarget } from '../src/store/db.ts';
import {
  aiModels,
  apiKeys,
  configChanges,
  customers,
  projectModels,
  projectProviders,
  projects,
  providerConnections,
  requestRecords,
  routes,
} from '../src/store/schema/index.ts';
import { testDatabase, type TestDatabase } from './support/db.ts';
import { settled } from './support/settled.ts';

/**
 * The store layer on both drivers: the same schema and migrations on PGlite (always) and on
 * PostgreSQL (when TEST_DATABASE_URL is set, as in CI). The driver is chosen explicitly here.
 */

const targets: { label: string; make: () => Promise<{ target: StoreTarget; cleanup: () => Promise<void> }> }[] = [
  { label: 'pglite', make: async () => ({ target: { driver: 'pglite', dataDir: 'memory' }, cleanup: async () => {} }) },
];
if (process.env.TEST_DATABASE_URL) {
  targets.push({
    label: 'postgres',
    make: async () => {
      const db: TestDatabase = await testDatabase();
      return { target: { driver: 'postgres', url: db.url as string }, cleanup: () => db.drop() };
    },
  });
}

for (const t of targets) {
  describe(`store on ${t.label}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    const secrets = new SecretBox(generateKek());

    beforeAll(async () => {
      const made = await t.make();
      cleanup = made.cleanup;
      store = await openStore(made.target);
    }, 60_000);

    afterAll(async () => {
      await store.close();
      await cleanup();
    });

    test('migrations ran: every table exists and is empty', async () => {
      for (const table of [customers, projects, aiModels, routes, apiKeys, requestRecords, configChanges]) {
        const [row] = await store.db.select({ n: count() }).from(table);
        expect(row?.n).toBe(0);
      }
      expect(await currentRevision(store.db)).toBe(0);
    });

    test('an active slug is unique; after a soft delete it can be reused', async () => {
      await store.db.insert(customers).values({ customerId: 'dup' });
      await expect(
        (
          await settled(
            store.db
              .insert(customers)
              .values({ customerId: 'dup' })
              .then(() => 'inserted'),
          )
        ).promise,
      ).rejects.toThrow();
      await store.db.update(customers).set({ deletedAt: new Date() }).where(eq(customers.customerId, 'dup'));
      await store.db.insert(customers).values({ customerId: 'dup' });
      const active = await store.db.select().from(customers).where(isNull(customers.deletedAt));
      expect(active.map((c) => c.customerId)).toEqual(['dup']);
    });

    test('the config document holds unwrapped secrets; the table holds only wrapped ones', async () => {
      const [live] = await store.db
        .select()
        .from(customers)
        .where(and(eq(customers.customerId, 'dup'), isNull(customers.deletedAt)));
      const [p] = await store.db
        .insert(projects)
        .values({ customerUuid: live?.id as string, customerId: 'dup', projectId: 'default' })
        .returning();
      const projectUuid = p?.id as string;
      const [m] = await store.db.insert(aiModels).values({ model: 'm1', provider: 'openai', inputPricePerMillion: 1.5 }).returning();
      await store.db.insert(projectModels).values({ projectUuid, customerId: 'dup', projectId: 'default', modelId: m?.id as string });
      await store.db.insert(projectProviders).values({ projectUuid, customerId: 'dup', projectId: 'default', providerName: 'openai' });
      await store.db.insert(providerConnections).values({
        projectUuid,
        customerId: 'dup',
        projectId: 'default',
        name: 'c1',
        provider: 'openai',
        baseUrl: 'http://127.0.0.1:1/v1',
        apiKeyWrapped: secrets.wrap('sk-very-secret'),
      });
      await store.db.insert(routes).values({
        projectUuid,
        customerId: 'dup',
        projectId: 'default',
        model: 'm1',
        targets: [{ connection: 'c1', model: 'up', priority: 0, weight: 1 }],
      });
      await store.db
        .insert(apiKeys)
        .values({ keyHash: 'h1', keyPrefix: 'sk-x', keyAddress: 'a', projectUuid, customerId: 'dup', projectId: 'default' });
      await store.db.insert(apiKeys).values({
        keyHash: 'h2',
        keyPrefix: 'sk-y',
        keyAddress: 'a',
        projectUuid,
        customerId: 'dup',
        projectId: 'default',
        revokedAt: new Date(),
      });
      await store.db.insert(configChanges).values({ target: 'local', kind: 'TEST', entity: 'x', entityId: '1' });

      const [raw] = await store.db.select({ k: providerConnections.apiKeyWrapped }).from(providerConnections);
      expect(raw?.k).not.toContain('sk-very-secret');

      const doc = await loadConfigDocument(store.db, secrets);
      expect(doc.revision).toBeGreaterThan(0);
      expect(doc.connections[0]?.apiKey).toBe('sk-very-secret');
      expect(doc.apiKeys.map((k) => k.keyHash)).toEqual(['h1']);

      const snap = buildSnapshot(doc, getAdapter);
      const key = snap.keys.get('h1');
      expect(key?.project.routes.get('m1')?.active).toBe(true);
      expect(key?.project.routes.get('m1')?.tiers[0]?.[0]?.connection.apiKey).toBe('sk-very-secret');
      expect(snap.keys.has('h2')).toBe(false);
      expect(Object.isFrozen(snap)).toBe(true);
      expect(JSON.parse(key?.project.modelListJson ?? '{}').data[0].input_price).toBe('0.0000015');
    });

    test('request records: a batch of 1,200 is written in full', async () => {
      const sink = new RecordWriter(directStore(store.db), { flushMs: 10_000, maxBatch: 500 });
      const now = Date.now();
      for (let i = 0; i < 1200; i++) {
        sink.add(
          entryOf({
            requestId: crypto.randomUUID(),
            receivedAt: new Date(now + i),
            endpoint: '/v1/chat/completions',
            httpStatus: 200,
            latencyMs: 1,
            inputTokens: 2,
            outputTokens: 3,
            totalTokens: 5,
            costNanoUsd: 7,
          }),
        );
      }
      await sink.stop();
      const [row] = await store.db.select({ n: count() }).from(requestRecords);
      expect(row?.n).toBe(1200);
    });
  });
}
