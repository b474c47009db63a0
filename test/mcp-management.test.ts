import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { DataNode } from '../src/app-data.ts';
import { setLogSink } from '../src/core/log.ts';
import type { McpSnapshot } from '../src/mcp/config.ts';
import { SEALED_PATTERN } from '../src/api/config-document.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The MCP gateway's management side (issue 24, item 1; contract §7): the catalog of MCP servers,
 * assignments that name catalog servers, profiles, and what reaches the data planes — the
 * snapshot's `mcp` (a profile lists only servers assigned to its project; removal propagates) and,
 * for a separate data plane, the credential sealed. The credential never appears in a response, an
 * audit entry, a log line or the store in plaintext.
 */

type Body = Record<string, unknown>;
let tg: TestGateway;
const tok: Record<string, string> = {};
const logs: string[] = [];
/** Every answer's text, to check no credential is ever returned. */
const answers: string[] = [];

const GH_TOKEN = 'ghp-mcp-catalog-secret-7f3a91c2';
const DOCS_KEY = 'docs-header-secret-b82e04d1';
const ROTATED = 'ghp-rotated-secret-0c6d5e88';
const SECRETS = [GH_TOKEN, DOCS_KEY, ROTATED];
const PUBLIC_URL = 'https://93.184.216.34/mcp';
const web = { customerId: 'acme', projectId: 'web' };

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
const refused = async (op: string, body: Body, code: string, field?: string, token?: string): Promise<string> => {
  const r = await call(op, body, token);
  expect({ op, code: r.body.code }).toEqual({ op, code });
  if (field) expect(String(r.body.message)).toContain(`'${field}'`);
  return String(r.body.message);
};
const mcp = (): McpSnapshot => {
  const s = tg.gw.snapshots.current;
  if (!s) throw new Error('no snapshot');
  return s.mcp;
};
const projectUuid = async (projectId: string): Promise<string> => {
  const r = (await tg.gw.store.db.execute(sql`select id from projects where project_id = ${projectId} and deleted_at is null`)) as unknown;
  const rows = (Array.isArray(r) ? r : (r as { rows: Body[] }).rows) as Body[];
  return String(rows[0]?.id);
};
/** The profile's served servers in the embedded data plane's snapshot: `serverId:prefix`. */
const served = async (projectId: string, profileId: string): Promise<string[] | undefined> =>
  mcp()
    .profiles.get(await projectUuid(projectId))
    ?.get(profileId)
    ?.servers.map((s) => `${s.serverId}:${s.prefix}${s.tools ? `:${s.tools.join(',')}` : ''}`);

beforeAll(async () => {
  setLogSink((line) => void logs.push(line));
  tg = await startTestGateway({ GATEWAY_LOG_LEVEL: 'debug' });
  await ok('CreateCustomer', { customerId: 'acme' });
  await ok('CreateProject', web);
  await ok('CreateProject', { customerId: 'acme', projectId: 'api' });
  await ok('AddProjectMember', { ...web, userId: 'owen', role: 'admin' });
  await ok('AddProjectMember', { ...web, userId: 'ann', role: 'member' });
  for (const u of ['owen', 'ann'])
    tok[u] = String(
      (
        await ok('CreateUserToken', {
          customerId: 'acme',
          workspaceId: 'ws',
          userId: u,
          organizationUnit: 'eng',
          role: 'dev',
          projectId: 'web',
        })
      ).accessToken,
    );
}, 60_000);

afterAll(async () => {
  setLogSink(undefined);
  await tg?.stop();
});

describe('the catalog (platform admin)', () => {
  test('create, get, list (paged), update; the credential is never returned', async () => {
    const gh = (
      await ok('CreateMcpServer', {
        serverId: 'github',
        url: PUBLIC_URL,
        authType: 'bearer',
        authValue: GH_TOKEN,
        description: 'GitHub',
        labels: { team: 'dev' },
      })
    ).server as Body;
    expect(gh).toMatchObject({
      serverId: 'github',
      url: PUBLIC_URL,
      transport: 'streamable-http',
      authType: 'bearer',
      authHeader: '',
      hasAuthValue: true,
      description: 'GitHub',
      labels: { team: 'dev' },
    });
    expect(gh.authValue).toBeUndefined();
    const docs = (
      await ok('CreateMcpServer', {
        serverId: 'docs',
        url: 'http://127.0.0.1:9/sse',
        transport: 'sse',
        authType: 'header',
        authHeader: 'X-Docs-Key',
        authValue: DOCS_KEY,
      })
    ).server as Body;
    expect(docs).toMatchObject({ transport: 'sse', authType: 'header', authHeader: 'X-Docs-Key', hasAuthValue: true });
    await ok('CreateMcpServer', { serverId: 'open', url: PUBLIC_URL });
    expect(((await ok('GetMcpServer', { serverId: 'github' }, tok.ann)).server as Body).id).toBe(gh.id);
    const first = await ok('ListMcpServers', { pageSize: 2 }, tok.ann);
    expect((first.servers as Body[]).map((s) => s.serverId)).toEqual(['github', 'docs']);
    const rest = await ok('ListMcpServers', { pageSize: 2, pageToken: first.nextPageToken });
    expect([(rest.servers as Body[]).map((s) => s.serverId), rest.nextPageToken]).toEqual([['open'], '']);
    const up = (await ok('UpdateMcpServer', { serverId: 'github', authValue: ROTATED, labels: {} })).server as Body;
    expect(up).toMatchObject({ description: 'GitHub', labels: {}, hasAuthValue: true, authType: 'bearer' });
    // Switching to 'none' drops the stored credential.
    expect(((await ok('UpdateMcpServer', { serverId: 'open', description: 'public' })).server as Body).hasAuthValue).toBe(false);
    await refused('CreateMcpServer', { serverId: 'github', url: PUBLIC_URL }, 'already_exists');
  });

  test('validation: URL scheme, header auth without a header name, a credential for the wrong auth type', async () => {
    await refused('CreateMcpServer', { serverId: 'x1', url: 'ftp://93.184.216.34/mcp' }, 'invalid_argument', 'url');
    await refused('CreateMcpServer', { serverId: 'x1', url: 'https://exa mple.com/mcp' }, 'invalid_argument', 'url');
    await refused(
      'CreateMcpServer',
      { serverId: 'x1', url: PUBLIC_URL, authType: 'header', authValue: 'v' },
      'invalid_argument',
      'authHeader',
    );
    await refused(
      'CreateMcpServer',
      { serverId: 'x1', url: PUBLIC_URL, authType: 'header', authHeader: 'Mcp-Session-Id', authValue: 'v' },
      'invalid_argument',
      'authHeader',
    );
    await refused('CreateMcpServer', { serverId: 'x1', url: PUBLIC_URL, authType: 'bearer' }, 'invalid_argument', 'authValue');
    await refused('CreateMcpServer', { serverId: 'x1', url: PUBLIC_URL, authValue: 'v' }, 'invalid_argument', 'authValue');
    await refused(
      'CreateMcpServer',
      { serverId: 'x1', url: PUBLIC_URL, authType: 'bearer', authHeader: 'X-K', authValue: 'v' },
      'invalid_argument',
      'authHeader',
    );
    await refused('UpdateMcpServer', { serverId: 'open', authType: 'bearer' }, 'invalid_argument', 'authValue');
    await refused('UpdateMcpServer', { serverId: 'ghost' }, 'not_found');
    await refused('GetMcpServer', { serverId: 'x1' }, 'not_found');
  });

  test('permissions: only the platform admin writes the catalog; a private address is refused to anyone else', async () => {
    await refused('CreateMcpServer', { serverId: 'mine', url: PUBLIC_URL }, 'permission_denied', undefined, tok.owen);
    await refused('CreateMcpServer', { serverId: 'mine', url: 'http://10.0.0.5/mcp' }, 'permission_denied', undefined, tok.owen);
    await refused('UpdateMcpServer', { serverId: 'github', url: 'http://169.254.169.254/mcp' }, 'permission_denied', undefined, tok.owen);
    await refused('DeleteMcpServer', { serverId: 'open' }, 'permission_denied', undefined, tok.ann);
    // The platform admin may (the docs server above is on loopback): the data plane is told so.
    await ok('AddProjectMcpServer', { ...web, serverId: 'docs' });
    await ok('CreateMcpProfile', { ...web, profileId: 'loopback', servers: [{ serverId: 'docs' }] });
    expect(mcp().servers.get('docs')?.allowPrivate).toBe(true);
    await ok('DeleteMcpProfile', { ...web, profileId: 'loopback' });
    await ok('RemoveProjectMcpServer', { ...web, serverId: 'docs' });
  });
});

describe('assignments and profiles', () => {
  test('an assignment names a catalog server; ListProjectMcpServers lists them', async () => {
    await refused('AddProjectMcpServer', { ...web, serverId: 'nowhere' }, 'not_found', undefined, tok.owen);
    await ok('AddProjectMcpServer', { ...web, serverId: 'github' }, tok.owen);
    await ok('AddProjectMcpServer', { ...web, serverId: 'docs' }, tok.owen);
    await refused('AddProjectMcpServer', { ...web, serverId: 'docs' }, 'already_exists');
    const entries = (await ok('ListProjectMcpServers', web, tok.ann)).entries as Body[];
    expect(entries.map((e) => e.serverId)).toEqual(['github', 'docs']);
  });

  test('profiles: CRUD by a project admin, reads by a member; default and empty prefixes; servers replaced on update', async () => {
    const created = (
      await ok(
        'CreateMcpProfile',
        {
          ...web,
          profileId: 'dev',
          description: 'dev tools',
          servers: [
            { serverId: 'github', tools: ['search_*', 'get_issue'] },
            { serverId: 'docs', prefix: '' },
          ],
        },
        tok.owen,
      )
    ).profile as Body;
    expect(created).toMatchObject({
      profileId: 'dev',
      description: 'dev tools',
      servers: [
        { serverId: 'github', tools: ['search_*', 'get_issue'], prefix: 'github' },
        { serverId: 'docs', prefix: '' },
      ],
    });
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'dev', servers: [{ serverId: 'github' }] },
      'already_exists',
      undefined,
      tok.owen,
    );
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'nope', servers: [{ serverId: 'github' }] },
      'permission_denied',
      undefined,
      tok.ann,
    );
    expect(((await ok('GetMcpProfile', { ...web, profileId: 'dev' }, tok.ann)).profile as Body).id).toBe(created.id);
    expect(((await ok('ListMcpProfiles', web, tok.ann)).profiles as Body[]).map((p) => p.profileId)).toEqual(['dev']);
    await ok('CreateMcpProfile', { ...web, profileId: 'ops', servers: [{ serverId: 'github', prefix: 'gh' }] }, tok.owen);
    expect(await served('web', 'dev')).toEqual(['github:github:search_*,get_issue', 'docs:']);
    const up = (await ok('UpdateMcpProfile', { ...web, profileId: 'ops', servers: [{ serverId: 'docs', prefix: 'd' }] }, tok.owen))
      .profile as Body;
    expect([up.servers, up.description]).toEqual([[{ serverId: 'docs', prefix: 'd' }], '']);
    expect(((await ok('UpdateMcpProfile', { ...web, profileId: 'ops', description: 'ops' }, tok.owen)).profile as Body).servers).toEqual([
      { serverId: 'docs', prefix: 'd' },
    ]);
    expect(await served('web', 'ops')).toEqual(['docs:d']);
    await ok('DeleteMcpProfile', { ...web, profileId: 'ops' }, tok.owen);
    await refused('GetMcpProfile', { ...web, profileId: 'ops' }, 'not_found');
    expect(await served('web', 'ops')).toBeUndefined();
  });

  test('validation: unassigned servers, a server twice, duplicate or separator prefixes', async () => {
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'bad', servers: [{ serverId: 'github' }, { serverId: 'open' }] },
      'failed_precondition',
      'servers.1.serverId',
    );
    await refused(
      'CreateMcpProfile',
      { customerId: 'acme', projectId: 'api', profileId: 'bad', servers: [{ serverId: 'github' }] },
      'failed_precondition',
      'servers.0.serverId',
    );
    await refused(
      'UpdateMcpProfile',
      { ...web, profileId: 'dev', servers: [{ serverId: 'open' }] },
      'failed_precondition',
      'servers.0.serverId',
    );
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'bad', servers: [{ serverId: 'github' }, { serverId: 'github', prefix: 'g2' }] },
      'invalid_argument',
      'servers.1.serverId',
    );
    await refused(
      'CreateMcpProfile',
      {
        ...web,
        profileId: 'bad',
        servers: [
          { serverId: 'github', prefix: 'x' },
          { serverId: 'docs', prefix: 'x' },
        ],
      },
      'invalid_argument',
      'servers.1.prefix',
    );
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'bad', servers: [{ serverId: 'github', prefix: 'docs' }, { serverId: 'docs' }] },
      'invalid_argument',
      'servers.1.prefix',
    );
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'bad', servers: [{ serverId: 'github', prefix: 'a__b' }] },
      'invalid_argument',
      'servers.0.prefix',
    );
    await refused('CreateMcpProfile', { ...web, profileId: 'bad', servers: [] }, 'invalid_argument', 'servers');
    await refused(
      'CreateMcpProfile',
      { ...web, profileId: 'x'.repeat(65), servers: [{ serverId: 'github' }] },
      'invalid_argument',
      'profileId',
    );
    await refused('GetMcpProfile', { ...web, profileId: 'bad' }, 'not_found');
  });

  test('a server in use cannot leave the catalog; the refusal names its users', async () => {
    const message = await refused('DeleteMcpServer', { serverId: 'github' }, 'failed_precondition');
    expect(message).toContain('acme/web');
    expect(message).toContain('acme/web/dev');
    expect(((await ok('GetMcpServer', { serverId: 'github' })).server as Body).serverId).toBe('github');
    const gone = await ok('DeleteMcpServer', { serverId: 'open' });
    expect(gone.success).toBe(true);
    await refused('GetMcpServer', { serverId: 'open' }, 'not_found');
    await ok('CreateMcpServer', { serverId: 'open', url: PUBLIC_URL });
  });
});

describe('what the data planes serve', () => {
  test('the snapshot: catalog servers with their credential in memory; a profile lists only assigned servers; removal and re-assignment propagate', async () => {
    expect(mcp().servers.get('github')).toEqual({
      serverId: 'github',
      url: PUBLIC_URL,
      transport: 'streamable-http',
      authType: 'bearer',
      authHeader: null,
      authValue: ROTATED,
      allowPrivate: false,
    });
    expect(mcp().servers.get('docs')).toMatchObject({
      transport: 'sse',
      authType: 'header',
      authHeader: 'X-Docs-Key',
      authValue: DOCS_KEY,
      allowPrivate: true,
    });
    // 'open' is in the catalog but no profile serves it: its entry is not sent.
    expect(mcp().servers.has('open')).toBe(false);
    await ok('RemoveProjectMcpServer', { ...web, serverId: 'docs' }, tok.owen);
    expect(await served('web', 'dev')).toEqual(['github:github:search_*,get_issue']);
    expect(mcp().servers.has('docs')).toBe(false);
    // The profile keeps its entry: assigned again, the server is served again.
    expect(((await ok('GetMcpProfile', { ...web, profileId: 'dev' })).profile as { servers: Body[] }).servers).toHaveLength(2);
    await ok('AddProjectMcpServer', { ...web, serverId: 'docs' }, tok.owen);
    expect(await served('web', 'dev')).toEqual(['github:github:search_*,get_issue', 'docs:']);
    // A catalog change (global) reaches the snapshot too.
    await ok('UpdateMcpServer', { serverId: 'github', url: 'https://93.184.216.35/mcp' });
    expect(mcp().servers.get('github')?.url).toBe('https://93.184.216.35/mcp');
    // Deleting the project removes its profiles.
    await ok('AddProjectMcpServer', { customerId: 'acme', projectId: 'api', serverId: 'open' });
    await ok('CreateMcpProfile', { customerId: 'acme', projectId: 'api', profileId: 'tmp', servers: [{ serverId: 'open' }] });
    const api = await projectUuid('api');
    expect(mcp().profiles.get(api)?.get('tmp')?.servers).toHaveLength(1);
    await ok('DeleteProject', { customerId: 'acme', projectId: 'api' });
    expect(mcp().profiles.has(api)).toBe(false);
    await ok('DeleteMcpServer', { serverId: 'open' });
  });

  test('a separate data plane gets the credential sealed, and opens it in memory only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-mcp-'));
    let node: DataNode | undefined;
    try {
      await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'edge', projectId: 'web' });
      node = await startSeparatePlane(tg, dir, 'acme', 'edge', '100ms');
      const plane = node;
      const deadline = Date.now() + 25_000;
      while (plane.snapshots.current?.mcp.servers.get('github')?.authValue !== ROTATED) {
        if (Date.now() > deadline) throw new Error('the data plane never served the MCP configuration');
        await Bun.sleep(100);
      }
      expect([...(plane.snapshots.current?.mcp.profiles.values() ?? [])].flatMap((m) => [...m.keys()])).toEqual(['dev']);
      const answer = await plane.controller.client.protocol('Pull', { full: true });
      const text = JSON.stringify(answer);
      expect(answer.unchanged).toBe(false);
      expect(SECRETS.filter((s) => text.includes(s) || text.includes(Buffer.from(s).toString('base64')))).toEqual([]);
      const doc = (JSON.parse(text) as { document: { mcpServers: Body[] } }).document;
      expect(doc.mcpServers.map((s) => s.serverId).sort()).toEqual(['docs', 'github']);
      for (const s of doc.mcpServers) expect(String(s.authValue)).toMatch(new RegExp(SEALED_PATTERN));
      const files = (root: string): string[] =>
        readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(root, e.name)) : [join(root, e.name)]));
      for (const f of files(join(dir, 'node')))
        expect({ f, leaked: SECRETS.filter((s) => readFileSync(f).toString('latin1').includes(s)) }).toEqual({ f, leaked: [] });
    } finally {
      await node?.stop(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('the credential is in no response, audit entry, log line, or store column in plaintext', async () => {
    const text = answers.join('\n');
    expect(SECRETS.filter((s) => text.includes(s))).toEqual([]);
    const dump = async (q: ReturnType<typeof sql>) => JSON.stringify(await tg.gw.store.db.execute(q));
    const audit = await dump(sql`select * from audit_logs`);
    expect(audit).toContain('CreateMcpServer');
    expect(audit).toContain('[REDACTED]');
    expect(SECRETS.filter((s) => audit.includes(s))).toEqual([]);
    const stored = await dump(sql`select * from mcp_servers`);
    expect(stored).toContain('auth_value_wrapped');
    expect(SECRETS.filter((s) => stored.includes(s))).toEqual([]);
    const changes = await dump(sql`select * from config_changes`);
    expect(SECRETS.filter((s) => changes.includes(s))).toEqual([]);
    expect(SECRETS.filter((s) => logs.some((l) => l.includes(s)))).toEqual([]);
  });
});
