import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { DataNode } from '../src/app-data.ts';
import { setLogSink } from '../src/core/log.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';
import { startSseServer, startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';

/**
 * Whose credential goes to an MCP server (issue 24 item 3): a project's or a member's own
 * credential for a catalog server, as BYOK keys are for providers — the calling member's (a user
 * token's user), then the project's, then the catalog's — managed through the API
 * (SetMcpServerCredential / DeleteMcpServerCredential / ListMcpServerCredentials), wrapped at rest,
 * used per call. And a separate data plane (role data) serving a profile from pulled, sealed
 * configuration: the credentials reach the upstream server, never its files.
 */

type Body = Record<string, unknown>;
const CATALOG = 'catalog-secret-4d1c7a';
const CATALOG_HDR = 'catalog-header-secret-93be10';
const PROJECT = 'project-own-secret-6f20b1';
const PROJECT_HDR = 'project-header-secret-0a7e55';
const ANN = 'ann-own-secret-c3e9d4';
const SECRETS = [CATALOG, CATALOG_HDR, PROJECT, PROJECT_HDR, ANN];
const acme = { customerId: 'acme', projectId: 'default' };

let tg: TestGateway;
let gh: TestMcpServer;
let hdr: TestMcpServer;
let apiKey: string;
let keyId: string;
const tok: Record<string, string> = {};
const answers: string[] = [];
const logs: string[] = [];

const call = async (op: string, body: Body, token?: string) => {
  const r = await tg.call(admin(op), body, token);
  answers.push(JSON.stringify(r.body));
  return r;
};
const ok = async (op: string, body: Body, token?: string): Promise<Body> => {
  const r = await call(op, body, token);
  if (r.status !== 200) throw new Error(`${op} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const code = async (op: string, body: Body, token?: string): Promise<unknown> => (await call(op, body, token)).body.code;

/**
 * What `server` received as its credential with the JSON-RPC messages (POSTs) sent during `fn`. A
 * standing GET stream of an earlier session may open at any time later, so GETs are not counted.
 */
const sentTo = async (server: TestMcpServer, field: 'authorization' | 'token', fn: () => Promise<unknown>): Promise<string[]> => {
  server.seen.length = 0;
  await fn();
  const posts = server.seen.filter((h) => h.method === 'POST');
  expect(posts.length).toBeGreaterThan(0);
  return [...new Set(posts.map((h) => h[field] ?? ''))];
};
const echo = async (base: string, credential: string, tool: string): Promise<string> => {
  const { client } = await connectMcp(`${base}/mcp/tools`, credential);
  try {
    return textOf(await client.callTool({ name: tool, arguments: { text: 'x' } }));
  } finally {
    await client.close();
  }
};

beforeAll(async () => {
  setLogSink((line) => void logs.push(line));
  gh = startStreamableServer('g', {});
  hdr = await startSseServer('h', {});
  tg = await startTestGateway({ GATEWAY_LOG_LEVEL: 'debug' });
  await ok('CreateCustomer', { customerId: 'acme' });
  await ok('AddProjectMember', { ...acme, userId: 'owen', role: 'admin' });
  await ok('AddProjectMember', { ...acme, userId: 'ann', role: 'member' });
  for (const u of ['owen', 'ann'])
    tok[u] = String(
      (
        await ok('CreateUserToken', {
          customerId: 'acme',
          workspaceId: 'ws',
          userId: u,
          organizationUnit: 'eng',
          role: 'dev',
          projectId: 'default',
        })
      ).accessToken,
    );
  const k = (await tg.must(apikeyOp('CreateApiKey'), { name: 'mcp', enterpriseContext: acme })) as { apiKey: string; id: string };
  apiKey = k.apiKey;
  keyId = k.id;
  await ok('CreateMcpServer', { serverId: 'gh', url: gh.url, authType: 'bearer', authValue: CATALOG });
  await ok('CreateMcpServer', {
    serverId: 'hdr',
    url: hdr.url,
    transport: 'sse',
    authType: 'header',
    authHeader: 'x-api-token',
    authValue: CATALOG_HDR,
  });
  await ok('CreateMcpServer', { serverId: 'open', url: gh.url });
  for (const serverId of ['gh', 'hdr', 'open']) await ok('AddProjectMcpServer', { ...acme, serverId });
  await ok('CreateMcpProfile', { ...acme, profileId: 'tools', servers: [{ serverId: 'gh' }, { serverId: 'hdr' }] });
}, 60_000);

afterAll(async () => {
  setLogSink(undefined);
  await tg?.stop();
  await gh?.stop();
  await hdr?.stop();
});

describe('managing own credentials', () => {
  test("the project's: its admins; a member's: that member (or the platform admin); never returned", async () => {
    expect(await code('SetMcpServerCredential', { ...acme, serverId: 'gh', authValue: PROJECT }, tok.ann)).toBe('permission_denied');
    const project = (await ok('SetMcpServerCredential', { ...acme, serverId: 'gh', authValue: PROJECT }, tok.owen)).credential as Body;
    expect(project).toMatchObject({ ...acme, serverId: 'gh', userId: '' });
    expect(project.authValue).toBeUndefined();
    await ok('SetMcpServerCredential', { ...acme, serverId: 'hdr', authValue: PROJECT_HDR }, tok.owen);
    expect(await code('SetMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann', authValue: 'not-yours' }, tok.owen)).toBe(
      'permission_denied',
    );
    expect(
      ((await ok('SetMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann', authValue: 'first' }, tok.ann)).credential as Body)
        .userId,
    ).toBe('ann');
    // Set again: replaced.
    await ok('SetMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann', authValue: ANN }, tok.ann);
    expect(await code('SetMcpServerCredential', { ...acme, serverId: 'gh', userId: 'nobody', authValue: 'v' })).toBe('failed_precondition');
    expect(await code('SetMcpServerCredential', { ...acme, serverId: 'open', authValue: 'v' })).toBe('failed_precondition');
    expect(await code('SetMcpServerCredential', { ...acme, serverId: 'ghost', authValue: 'v' })).toBe('not_found');
    const list = async (token?: string) =>
      ((await ok('ListMcpServerCredentials', acme, token)).credentials as Body[]).map((c) => `${c.serverId}:${c.userId}`).sort();
    expect(await list(tok.ann)).toEqual(['gh:', 'gh:ann', 'hdr:']);
    expect(await list(tok.owen)).toEqual(['gh:', 'hdr:']);
    expect(await list()).toEqual(['gh:', 'gh:ann', 'hdr:']);
    expect(await code('DeleteMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann' }, tok.owen)).toBe('permission_denied');
    expect(await code('DeleteMcpServerCredential', { ...acme, serverId: 'open' })).toBe('not_found');
  });

  test("the member's credential, then the project's, then the catalog's goes upstream, per call", async () => {
    // An API key has no authenticated user: the project's.
    expect(await sentTo(gh, 'authorization', () => echo(tg.url, apiKey, 'gh__echo'))).toEqual([`Bearer ${PROJECT}`]);
    expect(await sentTo(hdr, 'token', () => echo(tg.url, apiKey, 'hdr__echo'))).toEqual([PROJECT_HDR]);
    // ann's own; owen has none: the project's.
    expect(await sentTo(gh, 'authorization', () => echo(tg.url, tok.ann as string, 'gh__echo'))).toEqual([`Bearer ${ANN}`]);
    expect(await sentTo(gh, 'authorization', () => echo(tg.url, tok.owen as string, 'gh__echo'))).toEqual([`Bearer ${PROJECT}`]);
    // A session open across a change takes the next credential in line at its next call.
    const { client } = await connectMcp(`${tg.url}/mcp/tools`, tok.ann as string);
    expect(await sentTo(gh, 'authorization', () => client.callTool({ name: 'gh__echo', arguments: { text: '1' } }))).toEqual([
      `Bearer ${ANN}`,
    ]);
    await ok('DeleteMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann' }, tok.ann);
    expect(await sentTo(gh, 'authorization', () => client.callTool({ name: 'gh__echo', arguments: { text: '2' } }))).toEqual([
      `Bearer ${PROJECT}`,
    ]);
    await ok('DeleteMcpServerCredential', { ...acme, serverId: 'gh' }, tok.owen);
    expect(await sentTo(gh, 'authorization', () => client.callTool({ name: 'gh__echo', arguments: { text: '3' } }))).toEqual([
      `Bearer ${CATALOG}`,
    ]);
    await client.close();
    // The caller's own credential never goes upstream.
    expect(JSON.stringify([...gh.seen, ...hdr.seen])).not.toContain(apiKey);
    // Restored for what follows.
    await ok('SetMcpServerCredential', { ...acme, serverId: 'gh', authValue: PROJECT }, tok.owen);
    await ok('SetMcpServerCredential', { ...acme, serverId: 'gh', userId: 'ann', authValue: ANN }, tok.ann);
  });
});

describe('a separate data plane serves a profile from pulled, sealed configuration', () => {
  test("credentials reach the upstream server, never the plane's files; removal and revocation within the propagation time", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-mcp-plane-'));
    let node: DataNode | undefined;
    try {
      await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
      node = await startSeparatePlane(tg, dir, 'acme', 'edge', '100ms');
      const plane = node;
      const deadline = Date.now() + 25_000;
      while (!plane.snapshots.current?.mcp.credentials.size) {
        if (Date.now() > deadline) throw new Error('the data plane never served the MCP configuration');
        await Bun.sleep(100);
      }
      expect(await sentTo(gh, 'authorization', () => echo(plane.inferenceUrl, apiKey, 'gh__echo'))).toEqual([`Bearer ${PROJECT}`]);
      expect(await sentTo(gh, 'authorization', () => echo(plane.inferenceUrl, tok.ann as string, 'gh__echo'))).toEqual([`Bearer ${ANN}`]);
      expect(await sentTo(hdr, 'token', () => echo(plane.inferenceUrl, apiKey, 'hdr__echo'))).toEqual([PROJECT_HDR]);
      const files = (root: string): string[] =>
        readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(root, e.name)) : [join(root, e.name)]));
      const stored = files(join(dir, 'node'));
      expect(stored.length).toBeGreaterThan(0);
      for (const f of stored)
        expect({ f, leaked: SECRETS.filter((s) => readFileSync(f).toString('latin1').includes(s)) }).toEqual({ f, leaked: [] });

      // Within the propagation time (the plane polls every 100 ms): a server leaves the profile, then the key is revoked.
      const { client } = await connectMcp(`${plane.inferenceUrl}/mcp/tools`, apiKey);
      const until = async (what: string, done: () => Promise<boolean>): Promise<number> => {
        const t0 = Date.now();
        while (!(await done())) {
          if (Date.now() - t0 > 10_000) throw new Error(`${what}: not within 10 s`);
          await Bun.sleep(50);
        }
        return Date.now() - t0;
      };
      await ok('UpdateMcpProfile', { ...acme, profileId: 'tools', servers: [{ serverId: 'gh' }] });
      await until('hdr leaves the profile', async () => !(await client.listTools()).tools.some((t) => t.name.startsWith('hdr__')));
      await client.close();
      await tg.must(apikeyOp('RevokeApiKey'), { id: keyId, ...acme });
      await until('the revoked key is refused', async () => {
        const r = await fetch(`${plane.inferenceUrl}/mcp/tools`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        });
        await r.text();
        return r.status === 401;
      });
    } finally {
      await node?.stop(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('never in plaintext', () => {
  test('no credential in a response, audit entry, log line, or store column', async () => {
    const text = answers.join('\n');
    expect(SECRETS.filter((s) => text.includes(s))).toEqual([]);
    const dump = async (q: ReturnType<typeof sql>) => JSON.stringify(await tg.gw.store.db.execute(q));
    const audit = await dump(sql`select * from audit_logs`);
    expect(audit).toContain('SetMcpServerCredential');
    expect(SECRETS.filter((s) => audit.includes(s))).toEqual([]);
    const stored = await dump(sql`select * from mcp_server_credentials`);
    expect(stored).toContain('auth_value_wrapped');
    expect(SECRETS.filter((s) => stored.includes(s))).toEqual([]);
    expect(SECRETS.filter((s) => logs.some((l) => l.includes(s)))).toEqual([]);
  });

  test('deleting the catalog server deletes the credentials for it; a server re-created under its id starts without them', async () => {
    await ok('SetMcpServerCredential', { ...acme, serverId: 'hdr', userId: 'ann', authValue: 'ann-hdr' }, tok.ann);
    await ok('UpdateMcpProfile', { ...acme, profileId: 'tools', servers: [{ serverId: 'gh' }] });
    await ok('RemoveProjectMcpServer', { ...acme, serverId: 'hdr' });
    await ok('DeleteMcpServer', { serverId: 'hdr' });
    expect(((await ok('ListMcpServerCredentials', acme)).credentials as Body[]).map((c) => c.serverId)).toEqual(['gh', 'gh']);
    await ok('CreateMcpServer', {
      serverId: 'hdr',
      url: hdr.url,
      transport: 'sse',
      authType: 'header',
      authHeader: 'x-api-token',
      authValue: CATALOG_HDR,
    });
    await ok('AddProjectMcpServer', { ...acme, serverId: 'hdr' });
    await ok('UpdateMcpProfile', { ...acme, profileId: 'tools', servers: [{ serverId: 'gh' }, { serverId: 'hdr' }] });
    expect(await sentTo(hdr, 'token', () => echo(tg.url, tok.ann as string, 'hdr__echo'))).toEqual([CATALOG_HDR]);
  });
});
