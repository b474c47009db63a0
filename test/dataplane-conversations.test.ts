import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'bun';
import OpenAI from 'openai';
import { ApiError } from '../src/api/client.ts';
import { type DataNode, startDataNode } from '../src/app-data.ts';
import { loadConfig } from '../src/config/env.ts';
import { PullController } from '../src/data-plane/remote/pull.ts';
import { readServiceAccountFile } from '../src/data-plane/remote/service-account-file.ts';
import { SnapshotHolder } from '../src/propagation/holder.ts';
import { getAdapter } from '../src/providers/registry.ts';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Stored Responses and Messages threads through separate data planes (issue 9 item 1, contract §5):
 * the store is the management plane's, reached over the data plane protocol with the service
 * account's JWT. A response stored through data plane A is continued (previous_response_id), read
 * and deleted through data plane B; a thread likewise. Calls are scoped to the projects the data
 * plane serves; with the management plane unreachable the client gets a 503 in its own format.
 */

type Body = Record<string, unknown>;
let w: World;
let dir: string;
const nodes: Record<'a' | 'b' | 'c', DataNode | undefined> = { a: undefined, b: undefined, c: undefined };
/** Data plane C reaches the management plane through this relay, which the outage test stops. */
let relay: Server<undefined> | undefined;
let otherFile = '';

const saFile = async (workspaceId: string, apiUri: string, customerId = 'acme'): Promise<string> => {
  const created = await w.tg.must(admin('CreateServiceAccount'), { customerId, workspaceId, apiUri });
  const file = join(dir, `sa-${workspaceId}.json`);
  writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
  return file;
};
const startNode = (file: string, name: string) =>
  startDataNode(
    loadConfig(['serve', '--role', 'data', '--service-account', file], {
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: join(dir, name),
      WORKER_POLL_INTERVAL: '100ms',
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_SHUTDOWN_GRACE: '1s',
    }),
  );
const url = (n: 'a' | 'b' | 'c'): string => nodes[n]?.inferenceUrl ?? '';
const sdk = (n: 'a' | 'b' | 'c') => new OpenAI({ baseURL: `${url(n)}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
const post = async (
  n: 'a' | 'b' | 'c',
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Body }> => {
  const res = await fetch(`${url(n)}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
};
const get = async (n: 'a' | 'b' | 'c', path: string, method = 'GET'): Promise<{ status: number; body: Body }> => {
  const res = await fetch(`${url(n)}${path}`, { method, headers: { authorization: `Bearer ${w.p.apiKey}` } });
  return { status: res.status, body: (await res.json()) as Body };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-conv-'));
  w = await startWorld({ WORKER_POLL_INTERVAL: '100ms' });
  const mp = w.tg.adminUrl;
  relay = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const u = new URL(req.url);
      return fetch(`${mp}${u.pathname}`, { method: req.method, headers: req.headers, body: await req.arrayBuffer() });
    },
  });
  for (const name of ['a', 'b', 'c'] as const)
    await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: `edge-${name}` });
  nodes.a = await startNode(await saFile('edge-a', mp), 'a');
  nodes.b = await startNode(await saFile('edge-b', mp), 'b');
  nodes.c = await startNode(await saFile('edge-c', `http://127.0.0.1:${relay.port}`), 'c');
  // A data plane of the same customer whose workspace serves another project.
  await w.tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'elsewhere' });
  await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge-elsewhere', projectId: 'elsewhere' });
  otherFile = await saFile('edge-elsewhere', mp);
}, 60_000);

afterAll(async () => {
  for (const n of Object.values(nodes)) await n?.stop(1000);
  relay?.stop(true);
  await stopWorld(w);
  rmSync(dir, { recursive: true, force: true });
});

describe('stored conversations through separate data planes', () => {
  test('a response stored through A is continued, read, listed and deleted through B', async () => {
    const first = await sdk('a').responses.create({ model: 'gpt-mini', input: 'remember the word kumquat' });
    expect(first.id).toMatch(/^resp_/);
    const second = await sdk('b').responses.create({ model: 'gpt-mini', input: 'what was the word?', previous_response_id: first.id });
    expect(second.output_text).toContain('what was the word?');
    // The upstream got the earlier turn, which B fetched from the management plane's store.
    const sent = JSON.stringify(w.oa.requests.at(-1)?.body);
    expect(sent).toContain('remember the word kumquat');
    expect(sent).toContain(first.output_text);

    const read = await get('b', `/v1/responses/${first.id}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(first.id);
    const items = await get('b', `/v1/responses/${second.id}/input_items`);
    expect(items.status).toBe(200);
    expect(JSON.stringify(items.body.data)).toContain('what was the word?');
    // Stored through B, continued through A.
    const third = await post('a', '/v1/responses', { model: 'gpt-mini', input: 'and again', previous_response_id: second.id });
    expect(third.status).toBe(200);

    const del = await get('b', `/v1/responses/${first.id}`, 'DELETE');
    expect(del.status).toBe(200);
    expect(del.body.deleted).toBe(true);
    const gone = await get('a', `/v1/responses/${first.id}`);
    expect(gone.status).toBe(404);
    expect((gone.body.error as Body).type).toBe('not_found_error');
  });

  test('a Messages thread started through A continues through B', async () => {
    const one = await post('a', '/v1/messages', {
      model: 'claude-mini',
      max_tokens: 100,
      thread: { type: 'create' },
      messages: [{ role: 'user', content: 'the colour is teal' }],
    });
    expect(one.status).toBe(200);
    const two = await post('b', '/v1/messages', {
      model: 'claude-mini',
      max_tokens: 100,
      thread: { type: 'continue', previous_message_id: one.body.id },
      messages: [{ role: 'user', content: 'which colour?' }],
    });
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(JSON.stringify(w.an.requests.at(-1)?.body)).toContain('the colour is teal');
  });

  test('conversation calls are scoped to the projects the calling data plane serves', async () => {
    const stored = await sdk('a').responses.create({ model: 'gpt-mini', input: 'private' });
    const projectId = String(((await w.tg.must(admin('GetProject'), { customerId: 'acme', projectId: 'default' })).project as Body).id);
    const other = new PullController(readServiceAccountFile(otherFile), new SnapshotHolder(), getAdapter, {
      dataDir: dir,
      pollMs: 60_000,
      driftSweepMs: 60_000,
    });
    const refused = await other.client.protocol('GetConversation', { projectId, id: stored.id }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, code: 'permission_denied' });
    const unauth = await fetch(`${w.tg.adminUrl}/dataplane.v1.DataplaneService/GetConversation`, {
      method: 'POST',
      body: JSON.stringify({ projectId, id: stored.id }),
    });
    expect(unauth.status).toBe(401);
  });

  test('management plane unreachable: 503 in the client format; answers that need no stored state still work', async () => {
    const stored = await post('c', '/v1/responses', { model: 'gpt-mini', input: 'before the outage' });
    expect(stored.status).toBe(200);
    relay?.stop(true);
    const cont = await post('c', '/v1/responses', { model: 'gpt-mini', input: 'during', previous_response_id: stored.body.id });
    expect(cont.status).toBe(503);
    expect(cont.body.error).toMatchObject({ type: 'service_unavailable_error', code: 'conversation_store_unavailable' });
    const read = await get('c', `/v1/responses/${String(stored.body.id)}`);
    expect(read.status).toBe(503);
    const thread = await post('c', '/v1/messages', {
      model: 'claude-mini',
      max_tokens: 50,
      thread: { type: 'continue', previous_message_id: 'msg_x' },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(thread.status).toBe(503);
    expect(thread.body).toMatchObject({ type: 'error', error: { code: 'conversation_store_unavailable' } });
    // Chat Completions keeps nothing: served from the last configuration as before.
    expect((await post('c', '/v1/chat/completions', { model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
  }, 30_000);
});
