import { afterAll, beforeAll, expect, test } from 'bun:test';
import { count, eq } from 'drizzle-orm';
import { DbConversationStore } from '../src/conversations/db-store.ts';
import type { StoredResponse, StoredThread } from '../src/data-plane/conversations.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { storedConversationItems, storedConversations } from '../src/store/schema/index.ts';
import { testDatabase, type TestDatabase } from './support/db.ts';
import { settled } from './support/settled.ts';

/**
 * The embedded data plane's conversation store writes in batches (one transaction per batch, not
 * per answer): every write lands and is readable, the last write of an id in a batch wins, one row
 * the database refuses fails only itself, and stop() writes what is queued. PGlite, and PostgreSQL
 * when TEST_DATABASE_URL is set.
 */

let tdb: TestDatabase;
let store: Store;
let cs: DbConversationStore;
const project = crypto.randomUUID();

beforeAll(async () => {
  tdb = await testDatabase();
  store = await openStore(tdb.url ? { driver: 'postgres', url: tdb.url } : { driver: 'pglite', dataDir: 'memory' });
  cs = new DbConversationStore(store.db, 3_600_000);
}, 120_000);

afterAll(async () => {
  await store.close();
  await tdb.drop();
});

const response = (n: number, text = `answer ${n}`): StoredResponse => ({
  kind: 'response',
  id: `resp_${n}`,
  createdAt: 1_700_000_000,
  input: [{ id: `msg_in_${n}`, type: 'message', role: 'user', content: `question ${n}` }],
  response: {
    id: `resp_${n}`,
    object: 'response',
    output: [{ id: `msg_out_${n}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }],
  },
});

test('300 concurrent writes all land in batches, with their items; each is readable', async () => {
  await Promise.all(Array.from({ length: 300 }, (_, n) => cs.put(project, response(n))));
  const [c] = await store.db.select({ n: count() }).from(storedConversations).where(eq(storedConversations.projectId, project));
  const [i] = await store.db.select({ n: count() }).from(storedConversationItems).where(eq(storedConversationItems.projectId, project));
  expect(c?.n).toBe(300);
  expect(i?.n).toBe(600);
  const got = (await cs.get(project, 'resp_123')) as StoredResponse | undefined;
  expect(got?.response.output).toEqual(response(123).response.output);
  expect(await cs.getItem(project, 'msg_in_7')).toEqual({ id: 'msg_in_7', type: 'message', role: 'user', content: 'question 7' });
  expect(await cs.get(crypto.randomUUID(), 'resp_123')).toBeUndefined();
});

test('two writes of one id in the same batch: the later wins (a thread reply marked continued)', async () => {
  const reply: StoredThread = { kind: 'thread', id: 'msg_thread_1', createdAt: 1_700_000_000, messages: [{ role: 'user', content: 'hi' }] };
  await Promise.all([cs.put(project, reply), cs.put(project, { ...reply, continued: true })]);
  expect(((await cs.get(project, 'msg_thread_1')) as StoredThread | undefined)?.continued).toBe(true);
});

test('a row the database refuses fails only itself; the others of its batch land', async () => {
  // A lone surrogate cannot be stored in jsonb: the batch is refused and retried row by row.
  const bad = response(1000, 'broken \ud800 text');
  const results = await Promise.allSettled([cs.put(project, response(1001)), cs.put(project, bad), cs.put(project, response(1002))]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(await cs.get(project, 'resp_1001')).toBeDefined();
  expect(await cs.get(project, 'resp_1002')).toBeDefined();
  expect(await cs.get(project, 'resp_1000')).toBeUndefined();
});

test('any text round-trips: quotes, dollar-quote tags, SQL, NUL-free control characters, astral characters', async () => {
  // On PGlite the JSON travels as a dollar-quoted literal of the simple protocol: a text holding the tag must not end it.
  const texts = ["it's", '$gw$', 'a $gw$ b $gwx$ c', "'; drop table stored_conversations; --", '$$ $tag$ \\ \n', '\u0001\t\r', '👋 é ✓'];
  await Promise.all(texts.map((t, i) => cs.put(project, response(3000 + i, t))));
  for (const [i, t] of texts.entries()) {
    const got = (await cs.get(project, `resp_${3000 + i}`)) as StoredResponse | undefined;
    expect(JSON.stringify(got?.response)).toContain(JSON.stringify(t).slice(1, -1));
  }
  expect(await cs.getItem(project, 'msg_out_3001')).toMatchObject({ content: [{ type: 'output_text', text: '$gw$' }] });
});

test('an expired conversation and its items are not read', async () => {
  const brief = new DbConversationStore(store.db, 1);
  await brief.put(project, response(4000));
  await Bun.sleep(10);
  expect(await brief.get(project, 'resp_4000')).toBeUndefined();
  expect(await brief.getItem(project, 'msg_out_4000')).toBeUndefined();
  // A project id that is not a uuid is refused as the parameterised query refuses it.
  await expect((await settled(cs.get('not-a-uuid', 'resp_1'))).promise).rejects.toThrow();
  await brief.stop();
});

test('stop() writes what is queued', async () => {
  const writes = Array.from({ length: 50 }, (_, n) => cs.put(project, response(2000 + n)));
  await cs.stop();
  const [c] = await store.db.select({ n: count() }).from(storedConversations).where(eq(storedConversations.projectId, project));
  expect(c?.n).toBe(300 + 1 + 2 + 7 + 1 + 50);
  await Promise.all(writes);
});
