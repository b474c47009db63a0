import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { like } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { generateKek } from '../../src/core/secrets.ts';
import { batchRoute, listFiles } from '../../src/data-plane/batches.ts';
import { NO_OBSERVERS } from '../../src/pipeline/observe.ts';
import { SnapshotHolder } from '../../src/propagation/holder.ts';
import { requestRecords } from '../../src/store/schema/index.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { meteredWorld, type World } from '../governance/support.ts';

/**
 * `/v1/files` and `/v1/batches` (contract §11) with the official OpenAI SDK: lines run through the
 * project's routes against either upstream family, output and error files in OpenAI's format, a
 * batch cancelled, a batch that survives a restart of the gateway midway, uploads bounded.
 */
const kek = generateKek();
const dir = mkdtempSync(join(tmpdir(), 'gw-batches-'));
let env: Record<string, string> = {};
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
let client: OpenAI;
const clientFor = (t: TestGateway, key: string) => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  env = {
    GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
    GATEWAY_KEK: kek,
    GATEWAY_DATA_DIR: dir,
    GATEWAY_BATCH_CONCURRENCY: '4',
    GATEWAY_FILE_MAX: '256KiB',
  };
  tg = await startTestGateway(env);
  // With PostgreSQL the restart below needs the same database.
  if (tg.db.url) env.DATABASE_URL = tg.db.url;
  w = await meteredWorld(tg, oa.url, an.url, 'batches');
  client = clientFor(tg, w.apiKey);
}, 60_000);

afterAll(async () => {
  await tg?.gw.stop();
  await tg?.db.drop();
  oa?.stop();
  an?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const jsonl = (lines: unknown[]): string => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
const chatLine = (id: string, model: string, content: string) => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, max_tokens: 20, messages: [{ role: 'user', content }] },
});

/** `/v1/messages` batches: contract §11 names the endpoint; the OpenAI SDK's type does not, so these go by fetch. */
const createMessagesBatch = async (inputFileId: string): Promise<OpenAI.Batch> => {
  const res = await fetch(`${tg.url}/v1/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: inputFileId, endpoint: '/v1/messages', completion_window: '24h' }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as OpenAI.Batch;
};

const upload = async (c: OpenAI, text: string) =>
  c.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });

const waitFor = async (c: OpenAI, id: string, done: (b: OpenAI.Batch) => boolean, ms = 60_000): Promise<OpenAI.Batch> => {
  const until = Date.now() + ms;
  for (;;) {
    const b = await c.batches.retrieve(id);
    if (done(b) || Date.now() > until) return b;
    await Bun.sleep(100);
  }
};

interface OutLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: Record<string, unknown> } | null;
  error: { code: string; message: string } | null;
}
const linesOf = async (c: OpenAI, fileId: string | null | undefined): Promise<OutLine[]> => {
  if (!fileId) return [];
  const text = await (await c.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as OutLine);
};

test('100 Chat lines against an Anthropic route: completed, 100 output lines matching the custom_ids, each a live request record', async () => {
  const lines = Array.from({ length: 100 }, (_, i) => chatLine(`req-${i}`, 'claude-mini', `batch line ${i}`));
  const file = await upload(client, jsonl(lines));
  expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'input.jsonl', status: 'processed' });
  expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { job: 'nightly' },
  });
  expect(batch).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id, metadata: { job: 'nightly' } });
  const done = await waitFor(client, batch.id, (b) => b.status === 'completed' || b.status === 'failed');
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 100, completed: 100, failed: 0 });
  expect(done.error_file_id).toBeNull();
  expect(done.completed_at).toBeGreaterThan(0);
  const out = await linesOf(client, done.output_file_id);
  expect(out.map((l) => l.custom_id).sort()).toEqual(lines.map((l) => l.custom_id).sort());
  for (const l of out) {
    expect(l.response?.status_code).toBe(200);
    expect(l.id.startsWith('batch_req_')).toBe(true);
    const body = l.response?.body as { object: string; model: string; choices: { message: { content: string } }[] };
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('claude-mini');
    expect(typeof body.choices[0]?.message.content).toBe('string');
  }
  // Every line went to the Anthropic upstream (translated) and left a request record.
  expect(an.requests.filter((r) => JSON.stringify(r.body).includes('batch line ')).length).toBe(100);
  await tg.gw.records.flush();
  const recs = await tg.gw.store.db
    .select({ id: requestRecords.requestId, status: requestRecords.httpStatus, provider: requestRecords.provider })
    .from(requestRecords)
    .where(like(requestRecords.clientRequestId, `${batch.id}/%`));
  expect(recs.length).toBe(100);
  expect(recs.every((r) => r.status === 200 && r.provider === 'anthropic')).toBe(true);
  expect(new Set(out.map((l) => l.response?.request_id))).toEqual(new Set(recs.map((r) => r.id)));
  // The output file is listed; the batch is listed.
  const files = await client.files.list();
  expect(files.data.map((f) => f.id)).toContain(done.output_file_id as string);
  const batches = await client.batches.list();
  expect(batches.data.map((b) => b.id)).toContain(batch.id);
}, 90_000);

test('Messages lines against the OpenAI route; a failing line goes to the error file; a malformed file fails the batch', async () => {
  const lines = [
    {
      custom_id: 'm1',
      method: 'POST',
      url: '/v1/messages',
      body: { model: 'metered', max_tokens: 20, messages: [{ role: 'user', content: 'hello there' }] },
    },
    {
      custom_id: 'm2',
      method: 'POST',
      url: '/v1/messages',
      body: { model: 'no-such-model', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      custom_id: 'm3',
      method: 'POST',
      url: '/v1/messages',
      body: { model: 'metered', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    },
  ];
  const file = await upload(client, jsonl(lines));
  const batch = await createMessagesBatch(file.id);
  const done = await waitFor(client, batch.id, (b) => b.status === 'completed' || b.status === 'failed');
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 3, completed: 1, failed: 2 });
  const out = await linesOf(client, done.output_file_id);
  expect(out.map((l) => l.custom_id)).toEqual(['m1']);
  expect(out[0]?.response?.body).toMatchObject({ type: 'message', role: 'assistant', model: 'metered' });
  const errors = await linesOf(client, done.error_file_id);
  expect(errors.map((l) => l.custom_id)).toEqual(['m2', 'm3']);
  expect(errors[0]?.response?.status_code).toBeGreaterThanOrEqual(400);
  expect(errors[0]?.response?.body).toMatchObject({ type: 'error' });
  expect(errors[1]).toMatchObject({ response: null, error: { code: 'invalid_request' } });

  const bad = await upload(
    client,
    `${JSON.stringify(lines[0])}\nnot json\n${JSON.stringify({ ...lines[0], url: '/v1/chat/completions', custom_id: 'x' })}\n`,
  );
  const failed = await waitFor(client, (await createMessagesBatch(bad.id)).id, (b) => b.status === 'failed' || b.status === 'completed');
  expect(failed.status).toBe('failed');
  expect(failed.errors?.data?.map((e) => [e.code, e.line])).toEqual([
    ['invalid_json_line', 2],
    ['invalid_url', 3],
  ]);
}, 60_000);

test('a batch is cancelled cleanly: lines stop, the finished ones are in the output file', async () => {
  oa.script(() => ({ text: 'slow', usage: { input: 1, output: 1 }, delayMs: 150 }));
  const lines = Array.from({ length: 60 }, (_, i) => chatLine(`c-${i}`, 'metered', `cancel line ${i}`));
  const batch = await client.batches.create({
    input_file_id: (await upload(client, jsonl(lines))).id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  await waitFor(client, batch.id, (b) => (b.request_counts?.completed ?? 0) >= 4);
  const cancelling = await client.batches.cancel(batch.id);
  expect(['cancelling', 'cancelled']).toContain(cancelling.status);
  const done = await waitFor(client, batch.id, (b) => b.status === 'cancelled');
  oa.script(undefined);
  expect(done.status).toBe('cancelled');
  expect(done.cancelled_at).toBeGreaterThan(0);
  const out = await linesOf(client, done.output_file_id);
  expect(out.length).toBe(done.request_counts?.completed ?? -1);
  expect(out.length).toBeGreaterThanOrEqual(4);
  expect(out.length).toBeLessThan(60);
  const sent = oa.requests.filter((r) => JSON.stringify(r.body).includes('cancel line ')).length;
  expect(sent).toBe(out.length);
  // A cancelled batch cannot be cancelled into anything else; a finished one refuses.
  expect((await client.batches.cancel(batch.id)).status).toBe('cancelled');
}, 60_000);

test('a batch survives a restart of the gateway midway: it resumes where it stopped, every line exactly once', async () => {
  oa.script(() => ({ text: 'after restart', usage: { input: 1, output: 1 }, delayMs: 60 }));
  const lines = Array.from({ length: 100 }, (_, i) => chatLine(`r-${i}`, 'metered', `restart line ${i}`));
  const batch = await client.batches.create({
    input_file_id: (await upload(client, jsonl(lines))).id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const midway = await waitFor(client, batch.id, (b) => (b.request_counts?.completed ?? 0) >= 10);
  expect(midway.status).toBe('in_progress');
  await tg.gw.stop();
  const before = oa.requests.filter((r) => JSON.stringify(r.body).includes('restart line ')).length;
  expect(before).toBeLessThan(100);
  tg = await startTestGateway(env);
  client = clientFor(tg, w.apiKey);
  const done = await waitFor(client, batch.id, (b) => b.status === 'completed');
  oa.script(undefined);
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 100, completed: 100, failed: 0 });
  const out = await linesOf(client, done.output_file_id);
  expect(out.map((l) => l.custom_id).sort()).toEqual(lines.map((l) => l.custom_id).sort());
  expect(oa.requests.filter((r) => JSON.stringify(r.body).includes('restart line ')).length).toBe(100);
}, 90_000);

test('uploads: over GATEWAY_FILE_MAX → 413, purpose must be batch; files are per project; delete', async () => {
  const big = 'x'.repeat(300 * 1024);
  const over = await client.files.create({ file: await toFile(Buffer.from(big), 'big.jsonl'), purpose: 'batch' }).catch((e: unknown) => e);
  expect(over).toBeInstanceOf(OpenAI.APIError);
  expect((over as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
  const wrong = await client.files
    .create({ file: await toFile(Buffer.from('{}\n'), 'a.jsonl'), purpose: 'assistants' })
    .catch((e: unknown) => e);
  expect((wrong as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  const f = await upload(client, jsonl([chatLine('a', 'metered', 'x')]));
  const other = await meteredWorld(tg, oa.url, an.url, 'batches-other', { suffix: '-o' });
  const stranger = clientFor(tg, other.apiKey);
  const seen = await stranger.files.retrieve(f.id).catch((e: unknown) => e);
  expect((seen as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  expect((await stranger.files.list()).data).toEqual([]);
  const foreign = await stranger.batches
    .create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    .catch((e: unknown) => e);
  expect((foreign as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  expect(await client.files.delete(f.id)).toMatchObject({ id: f.id, deleted: true });
  expect(((await client.files.retrieve(f.id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
}, 60_000);

test('a data plane without the store (a separate data plane) refuses files and batches with 501', async () => {
  const deps = { snapshots: new SnapshotHolder(), observers: NO_OBSERVERS, recordBodies: false, keepAliveMs: 1000 };
  const res = await batchRoute('/v1/files', listFiles)(deps, new Request('http://dp/v1/files'), {
    requestId: 'r',
    clientRequestId: undefined,
  });
  expect(res.status).toBe(501);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('unsupported_endpoint');
  expect(body.error.message).toContain('embedded data plane');
});
