import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { inArray } from 'drizzle-orm';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../src/api/client.ts';
import { protocolPath } from '../src/api/dataplane.ts';
import type { StoredConversation } from '../src/core/conversation-store.ts';
import { PullController } from '../src/data-plane/remote/pull.ts';
import { pushRecordsWith, RemoteRecordSink } from '../src/data-plane/remote/remote-sink.ts';
import { setLogSink } from '../src/core/log.ts';
import { readServiceAccountFile } from '../src/data-plane/remote/service-account-file.ts';
import { SnapshotHolder } from '../src/propagation/holder.ts';
import { getAdapter } from '../src/providers/registry.ts';
import { requestRecords } from '../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The data plane protocol's schemas (src/api/dataplane.ts, issue 23 items 1-2): the management
 * side validates requests against them and answers in them, and a data plane reaches it only
 * through the typed client (`ManagementClient.protocol`, as its service account). A proxy in front
 * of a real gateway plays a management plane that answers 503, slowly or out of shape.
 */

let tg: TestGateway;
let proxy: ReturnType<typeof Bun.serve>;
let controller: PullController;
let projectUuid = '';
const dir = mkdtempSync(join(tmpdir(), 'gw-protocol-'));
/** How the proxy answers a call, or undefined to pass it through. */
let fault: ((call: string) => Promise<Response | undefined>) | undefined;

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const refusal = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
/** An untyped body sent as it is: what another (or a broken) data plane might send. */
const raw = (call: 'Pull' | 'PushRecords' | 'PutConversation' | 'GetConversation', body: unknown) =>
  refusal(controller.client.post(protocolPath(call), JSON.stringify(body)));

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'other' });
  await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'web' });
  projectUuid = String(((await tg.must(admin('GetProject'), { customerId: 'acme', projectId: 'web' })).project as { id: string }).id);
  proxy = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const url = new URL(req.url);
      const body = await req.text();
      return (
        (await fault?.(url.pathname.split('/').at(-1) ?? '')) ??
        fetch(`${tg.adminUrl}${url.pathname}`, { method: 'POST', headers: req.headers, body })
      );
    },
  });
  const created = await tg.must(admin('CreateServiceAccount'), {
    customerId: 'acme',
    workspaceId: 'edge',
    apiUri: `http://127.0.0.1:${proxy.port}`,
  });
  writeFileSync(join(dir, 'sa.json'), JSON.stringify(created), { mode: 0o600 });
  controller = new PullController(readServiceAccountFile(join(dir, 'sa.json')), new SnapshotHolder(), getAdapter, {
    dataDir: dir,
    pollMs: 60_000,
    driftSweepMs: 60_000,
  });
}, 60_000);

afterAll(async () => {
  controller?.stop();
  proxy?.stop(true);
  await tg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the management side answers in the protocol schemas and validates requests against them', () => {
  test('Pull: a full answer, then unchanged at that revision, each checked against PullResponseSchema', async () => {
    const full = await controller.client.protocol('Pull', { full: true });
    expect(full.unchanged).toBe(false);
    if (full.unchanged) return;
    expect(full.document.projects.map((p) => p.projectId)).toEqual(['web']);
    expect(full.dataplaneId).toBe('edge');
    const again = await controller.client.protocol('Pull', { knownRevision: full.revision, appliedRevision: full.revision });
    expect(again).toEqual({ dataplaneId: 'edge', customerId: 'acme', revision: full.revision, unchanged: true });
  });

  test('Pull requests out of the schema are invalid_argument naming the field, in the words they always had', async () => {
    expect(await raw('Pull', { full: 'yes' })).toMatchObject({
      code: 'invalid_argument',
      status: 400,
      detail: { message: 'full: a boolean' },
    });
    expect(await raw('Pull', { knownRevision: 'abc' })).toMatchObject({
      code: 'invalid_argument',
      detail: { message: 'knownRevision: an int64' },
    });
    expect(await raw('Pull', { appliedRevision: '99999999999999999' })).toMatchObject({
      code: 'invalid_argument',
      detail: { message: 'appliedRevision: an int64' },
    });
    expect(await raw('Pull', { waitSeconds: 31 })).toMatchObject({
      code: 'invalid_argument',
      detail: { message: 'waitSeconds: a number of seconds from 0 to 30' },
    });
    expect(await raw('PushRecords', { records: 'x' })).toMatchObject({
      code: 'invalid_argument',
      detail: { message: 'records: an array of at most 5000' },
    });
    expect(await raw('Pull', [1])).toMatchObject({ code: 'invalid_argument', detail: { message: 'the body must be a JSON object' } });
  });

  test('PushRecords: records are checked one by one; the answer is PushRecordsResponseSchema', async () => {
    const good = {
      request_id: crypto.randomUUID(),
      received_at: new Date().toISOString(),
      project_id: 'web',
      endpoint: '/v1/chat/completions',
      http_status: 200,
      latency_ms: 5,
    };
    const answer = await controller.client.protocol('PushRecords', {
      records: [good, { ...good, request_id: crypto.randomUUID(), endpoint: ['/v1/chat/completions'] }, 'x'],
    });
    expect(answer).toEqual({
      accepted: 1,
      rejected: 2,
      errors: [
        { index: 1, message: 'endpoint: must be a string' },
        { index: 2, message: 'not a JSON object' },
      ],
    });
  });

  test('PushRecords never takes a record it cannot store: each refused with the field named, every accepted one stored', async () => {
    const good = () => ({
      request_id: crypto.randomUUID(),
      received_at: new Date().toISOString(),
      project_id: 'web',
      endpoint: '/v1/chat/completions',
      http_status: 200,
      latency_ms: 5,
    });
    const without = (field: 'http_status' | 'latency_ms') => {
      const r: Record<string, unknown> = good();
      delete r[field];
      return r;
    };
    const records = [
      good(),
      without('http_status'),
      without('latency_ms'),
      { ...good(), http_status: null },
      { ...good(), request_id: 'r-not-a-uuid' },
      { ...good(), received_at: '2024-02-30T00:00:00Z' },
      { ...good(), received_at: '2024' },
      { ...good(), stream: 'yes' },
      { ...good(), input_tokens: '5' },
      { ...good(), model: { name: 'x' } },
      // Cleaned and flagged by the writer, never refused nor dropped: NUL in text, an int4 overflow.
      { ...good(), model: 'gpt\u0000x', output_tokens: 1e12 },
      good(),
    ];
    const answer = await controller.client.protocol('PushRecords', { records });
    expect(answer).toEqual({
      accepted: 3,
      rejected: 9,
      errors: [
        { index: 1, message: 'http_status: required, a number' },
        { index: 2, message: 'latency_ms: required, a number' },
        { index: 3, message: 'http_status: required, a number' },
        { index: 4, message: 'request_id: must be a UUID' },
        { index: 5, message: 'received_at: must be an ISO 8601 time (YYYY-MM-DDTHH:MM:SS[.ffffff]Z or ±HH:MM)' },
        { index: 6, message: 'received_at: must be an ISO 8601 time (YYYY-MM-DDTHH:MM:SS[.ffffff]Z or ±HH:MM)' },
        { index: 7, message: 'stream: must be a boolean' },
        { index: 8, message: 'input_tokens: must be a number' },
        { index: 9, message: 'model: must be a string' },
      ],
    });
    // Every record the answer counted as accepted is in the store (the answer came after the write).
    const taken = [records[0], records[10], records[11]].map((r) => String(r?.request_id));
    const rows = await tg.gw.store.db
      .select({ id: requestRecords.requestId, sanitized: requestRecords.sanitized, model: requestRecords.model })
      .from(requestRecords)
      .where(inArray(requestRecords.requestId, taken));
    expect(rows.map((r) => r.id).sort()).toEqual([...taken].sort());
    expect(rows.find((r) => r.id === taken[1])).toMatchObject({ model: 'gptx', sanitized: 'text,numbers' });
  });

  test('stored conversations round-trip through the typed calls; a malformed one or another project is refused', async () => {
    const thread: StoredConversation = {
      kind: 'thread',
      id: `msg_${crypto.randomUUID()}`,
      createdAt: 1_700_000_000,
      system: 'be brief',
      messages: [{ role: 'user', content: 'hi' }],
    };
    expect(await controller.client.protocol('PutConversation', { projectId: projectUuid, conversation: thread })).toEqual({});
    expect((await controller.client.protocol('GetConversation', { projectId: projectUuid, id: thread.id })).conversation).toEqual(thread);
    expect(await controller.client.protocol('GetConversationItem', { projectId: projectUuid, itemId: 'item_absent' })).toEqual({
      item: null,
    });
    expect(await controller.client.protocol('DeleteConversation', { projectId: projectUuid, id: thread.id })).toEqual({ deleted: true });
    expect(await controller.client.protocol('GetConversation', { projectId: projectUuid, id: thread.id })).toEqual({ conversation: null });
    const malformed = await raw('PutConversation', { projectId: projectUuid, conversation: { kind: 'thread', id: 'x', createdAt: 1 } });
    expect(malformed).toMatchObject({ code: 'invalid_argument', status: 400 });
    expect(String((malformed as ApiError).detail.message)).toStartWith('conversation: ');
    const other = String(((await tg.must(admin('GetProject'), { customerId: 'acme', projectId: 'other' })).project as { id: string }).id);
    expect(await raw('GetConversation', { projectId: other, id: thread.id })).toMatchObject({ code: 'permission_denied', status: 403 });
  });
});

describe('the data plane reaches the management plane only through the typed client', () => {
  test('record shipping: 200 sends, a 400 or a named refusal refuses, 503 and an unreachable plane keep the batch', async () => {
    const send = pushRecordsWith(controller.client);
    const record = JSON.stringify({
      request_id: crypto.randomUUID(),
      received_at: new Date().toISOString(),
      project_id: 'web',
      endpoint: '/v1/chat/completions',
      http_status: 200,
      latency_ms: 5,
    });
    expect(await send(`[${record}]`)).toBe('ok');
    fault = async (call) =>
      call === 'PushRecords' ? json(503, { code: 'unavailable', message: 'the record store is unavailable; retry' }) : undefined;
    expect(await send(`[${record}]`)).toBe('retry');
    fault = undefined;
    expect(await send('"not an array"')).toEqual({ refused: [{ message: 'records: an array of at most 5000' }] });
    const missing = JSON.stringify({
      request_id: crypto.randomUUID(),
      received_at: new Date().toISOString(),
      endpoint: '/v1/chat/completions',
      latency_ms: 5,
    });
    expect(await send(`[${record},${missing}]`)).toEqual({ refused: [{ index: 1, message: 'http_status: required, a number' }] });
    const offline = new PullController(
      { ...readServiceAccountFile(join(dir, 'sa.json')), apiUri: 'http://127.0.0.1:9' },
      new SnapshotHolder(),
      getAdapter,
      { dataDir: dir, pollMs: 60_000, driftSweepMs: 60_000 },
    );
    expect(await pushRecordsWith(offline.client)(`[${record}]`)).toBe('retry');
  });

  test('records the management plane refuses are kept on disk with the reason, logged, and never sent again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-refused-'));
    const lines: string[] = [];
    let pushes = 0;
    fault = async (call) => {
      if (call === 'PushRecords') pushes++;
      return undefined;
    };
    setLogSink((l) => void lines.push(l));
    try {
      const sink = new RemoteRecordSink(pushRecordsWith(controller.client), dataDir, { flushMs: 60_000 });
      const row = {
        request_id: crypto.randomUUID(),
        received_at: new Date().toISOString(),
        project_id: 'web',
        endpoint: '/v1/chat/completions',
        http_status: 200,
        latency_ms: 5,
      };
      const { http_status: _status, ...withoutStatus } = { ...row, request_id: crypto.randomUUID() };
      sink.add({ row, requestBody: null, responseBody: null, sanitized: null });
      sink.add({ row: withoutStatus, requestBody: '{"model":"m"}', responseBody: null, sanitized: null });
      await sink.flush();
      expect(sink.stats).toMatchObject({ sent: 1, refused: 1, dropped: 0, spooledBatches: 0, queued: 0 });
      const refusedDir = join(dataDir, 'record-refused');
      const files = readdirSync(refusedDir).filter((f) => f.endsWith('.json'));
      expect(files).toHaveLength(1);
      const kept = JSON.parse(readFileSync(join(refusedDir, files[0] ?? ''), 'utf8')) as { refusals: unknown[]; records: unknown[] };
      expect(kept.refusals).toEqual([{ index: 0, message: 'http_status: required, a number' }]);
      expect(kept.records).toEqual([{ ...withoutStatus, request_body: { model: 'm' }, response_body: null, sanitized: null }]);
      const said = lines.filter((l) => l.includes('refused request records'));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('http_status: required, a number');
      // The good one is stored; the refused one is not sent again (nor by a later start on the same directory).
      const stored = await tg.gw.store.db
        .select({ id: requestRecords.requestId })
        .from(requestRecords)
        .where(inArray(requestRecords.requestId, [row.request_id, withoutStatus.request_id]));
      expect(stored.map((r) => r.id)).toEqual([row.request_id]);
      await sink.flush();
      await sink.stop();
      const again = new RemoteRecordSink(pushRecordsWith(controller.client), dataDir, { flushMs: 60_000 });
      await again.flush();
      await again.stop();
      expect(pushes).toBe(1);
      // A batch refused whole (400) is kept whole with the reason, not dropped.
      fault = async (call) =>
        call === 'PushRecords' ? json(400, { code: 'invalid_argument', message: 'records: an array of at most 5000' }) : undefined;
      const third = new RemoteRecordSink(pushRecordsWith(controller.client), dataDir, { flushMs: 60_000 });
      third.add({ row, requestBody: null, responseBody: null, sanitized: null });
      await third.flush();
      await third.stop();
      expect(third.stats).toMatchObject({ refused: 1, dropped: 0, spooledBatches: 0 });
      expect(readdirSync(refusedDir).filter((f) => f.endsWith('.json'))).toHaveLength(2);
    } finally {
      fault = undefined;
      setLogSink(undefined);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a Pull answer out of the protocol shape is refused by the client and not served; the plane counts as reachable', async () => {
    fault = async (call) =>
      call === 'Pull'
        ? json(200, { dataplaneId: 'edge', customerId: 'acme', revision: '1', unchanged: false, document: { revision: 1 }, sealedKey: 'k' })
        : undefined;
    try {
      expect(await refusal(controller.client.protocol('Pull', { full: true }))).toMatchObject({ code: 'internal', status: 200 });
      expect(await controller.pull(true)).toBe(true);
      expect(controller.status).toMatchObject({ reachable: true, appliedRevision: -1, refused: undefined });
      expect(String(controller.status.lastError)).toContain('does not match its schema');
    } finally {
      fault = undefined;
    }
  });

  test('a refused account: the Pull marks it refused with the management plane’s words and reason', async () => {
    fault = async (call) =>
      call === 'Pull' ? json(401, { code: 'unauthenticated', message: 'service account expired', reason: 'expired' }) : undefined;
    try {
      const e = await refusal(controller.client.protocol('Pull', {}));
      expect(e).toBeInstanceOf(ApiError);
      expect(e).toMatchObject({ status: 401, code: 'unauthenticated', detail: { message: 'service account expired', reason: 'expired' } });
      expect(await controller.pull(false)).toBe(false);
      expect(controller.status).toMatchObject({ reachable: true, refused: 'service account expired' });
    } finally {
      fault = undefined;
    }
    expect(await controller.pull(true)).toBe(true);
    expect(controller.status.refused).toBeUndefined();
    expect(controller.status.appliedRevision).toBeGreaterThan(0);
  });

  test('a call has its own deadline (a held Pull waits longer than the default) and stop() aborts what is in flight', async () => {
    fault = async (call) => {
      if (call !== 'Pull') return undefined;
      await Bun.sleep(400);
      return json(200, { dataplaneId: 'edge', customerId: 'acme', revision: '1', unchanged: true });
    };
    try {
      expect(await refusal(controller.client.protocol('Pull', {}, { timeoutMs: 100 }))).toMatchObject({ code: 'unavailable', status: 0 });
      expect(await controller.client.protocol('Pull', {}, { timeoutMs: 2_000 })).toMatchObject({ unchanged: true });
      const started = Date.now();
      const inFlight = refusal(controller.client.protocol('Pull', {}, { timeoutMs: 10_000 }));
      await Bun.sleep(50);
      controller.stop();
      expect(await inFlight).toMatchObject({ code: 'unavailable', status: 0 });
      expect(Date.now() - started).toBeLessThan(350);
    } finally {
      fault = undefined;
    }
  });
});
