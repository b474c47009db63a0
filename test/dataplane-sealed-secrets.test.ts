import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DataNode, startDataNode } from '../src/app-data.ts';
import { loadConfig } from '../src/config/env.ts';
import { SEALED_PATTERN } from '../src/api/config-document.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin, byokOp } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 22, defect 1: a separate data plane (`--role data`, in process, real listeners) is sent
 * every secret of its configuration sealed — connection keys, connection options, BYOK project and
 * user keys — and keeps them sealed on disk: neither the raw Pull answer nor any file under its
 * GATEWAY_DATA_DIR holds one of the secrets this test created, in plaintext or base64. Inference
 * through that data plane still uses the BYOK keys, also after a restart from the disk cache alone.
 */

type Body = Record<string, unknown>;
let w: World;
let dir: string;
let node: DataNode | undefined;
const tok: Record<string, string> = {};

const ANN_OPENAI = 'sk-ann-user-byok-7c1f9e2a55';
const PROJECT_OPENAI = 'sk-project-byok-openai-4d8b61';
const PROJECT_ANTHROPIC = 'sk-ant-project-byok-93e0aa7';
const HEADER_SECRET = 'hdr-secret-a4417fe0c2';
/** Every secret the test created (the provisioned connection keys included). */
const SECRETS = [ANN_OPENAI, PROJECT_OPENAI, PROJECT_ANTHROPIC, HEADER_SECRET, 'sk-upstream-openai-secret', 'sk-ant-upstream-secret'];

/** A secret in any of the forms a careless writer could leave it in. */
const forms = (s: string): string[] => [
  s,
  Buffer.from(s).toString('base64'),
  Buffer.from(s).toString('base64url'),
  Buffer.from(s).toString('hex'),
];
const leaked = (text: string): string[] => SECRETS.filter((s) => forms(s).some((f) => text.includes(f)));

const filesUnder = (root: string): string[] =>
  readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(root, e.name)) : [join(root, e.name)]));

const chat = async (base: string, model: string, token: string): Promise<number> => {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.text();
  return r.status;
};
const lastOpenai = () => String(w.oa.requests.at(-1)?.headers.authorization);
const lastAnthropic = () => String(w.an.requests.at(-1)?.headers['x-api-key']);

const until = async (what: string, fn: () => Promise<boolean>, ms = 25_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what} (${JSON.stringify(node?.controller.status)})`);
    await Bun.sleep(100);
  }
};

/** The BYOK keys reach the upstream through the data plane at `base`: the user's, then the project's. */
const servesByok = async (base: string): Promise<void> => {
  expect(await chat(base, 'gpt-mini', tok.ann as string)).toBe(200);
  expect(lastOpenai()).toBe(`Bearer ${ANN_OPENAI}`);
  expect(await chat(base, 'gpt-mini', w.p.apiKey)).toBe(200);
  expect(lastOpenai()).toBe(`Bearer ${PROJECT_OPENAI}`);
  expect(await chat(base, 'claude-mini', w.p.apiKey)).toBe(200);
  expect(lastAnthropic()).toBe(PROJECT_ANTHROPIC);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-sealed-'));
  w = await startWorld();
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'owen', role: 'admin' });
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'ann', role: 'member' });
  for (const u of ['owen', 'ann']) {
    tok[u] = String(
      (
        await w.tg.must(admin('CreateUserToken'), {
          customerId: 'acme',
          workspaceId: 'edge',
          userId: u,
          organizationUnit: 'eng',
          role: 'dev',
        })
      ).accessToken,
    );
  }
  await w.tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'with-header',
    provider: 'openai',
    apiKey: 'sk-upstream-openai-secret',
    options: { headers: { 'x-custom-auth': HEADER_SECRET } },
  });
  const register = async (body: Body, token?: string) => expect((await w.tg.call(byokOp('Register'), body, token)).status).toBe(200);
  await register({ provider: 'PROVIDER_OPENAI', name: 'team', secret: PROJECT_OPENAI }, tok.owen);
  await register({ provider: 'PROVIDER_OPENAI', name: 'mine', secret: ANN_OPENAI, userScope: true }, tok.ann);
  await register({ customerId: 'acme', provider: 'PROVIDER_ANTHROPIC', name: 'ant', secret: PROJECT_ANTHROPIC });
  await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
  node = await startSeparatePlane(w.tg, dir, 'acme', 'edge', '100ms');
  const base = node.inferenceUrl;
  await until(
    'the data plane serves the BYOK keys',
    async () => (await chat(base, 'gpt-mini', tok.ann as string)) === 200 && lastOpenai() === `Bearer ${ANN_OPENAI}`,
  );
}, 90_000);

afterAll(async () => {
  await node?.stop(0);
  await stopWorld(w);
  rmSync(dir, { recursive: true, force: true });
});

describe('secrets on a separate data plane (issue 22, defect 1)', () => {
  test('inference through the data plane uses the BYOK user and project keys', async () => {
    await servesByok(String(node?.inferenceUrl));
  });

  test('the raw Pull answer holds no secret: every secret field is a sealed value', async () => {
    const answer = await (node as DataNode).controller.client.protocol('Pull', { full: true });
    const text = JSON.stringify(answer);
    expect(answer.unchanged).toBe(false);
    expect(leaked(text)).toEqual([]);
    const doc = (JSON.parse(text) as { document: { byokKeys: Body[]; connections: Body[] } }).document;
    expect(doc.byokKeys).toHaveLength(3);
    const sealed = new RegExp(SEALED_PATTERN);
    for (const k of doc.byokKeys) expect(String(k.secret)).toMatch(sealed);
    for (const c of doc.connections) {
      expect(String(c.apiKey)).toMatch(sealed);
      expect(String(c.options)).toMatch(sealed);
    }
  });

  test('no file under GATEWAY_DATA_DIR holds a secret; a restart from the disk cache alone still serves the BYOK keys', async () => {
    const dataDir = join(dir, 'node');
    const cache = join(dataDir, 'config-cache.json');
    expect(existsSync(cache)).toBe(true);
    const files = filesUnder(dataDir);
    expect(files).toContain(cache);
    for (const f of files) expect({ file: f, leaked: leaked(readFileSync(f).toString('latin1')) }).toEqual({ file: f, leaked: [] });
    // The same account, its management plane unreachable: the data plane serves what it kept on disk.
    await node?.stop(0);
    node = undefined;
    const sa = (JSON.parse(readFileSync(join(dir, 'sa.json'), 'utf8')) as { serviceAccount: Body }).serviceAccount;
    writeFileSync(join(dir, 'sa-offline.json'), JSON.stringify({ ...sa, apiUri: 'http://127.0.0.1:9' }), { mode: 0o600 });
    node = await startDataNode(
      loadConfig(['serve', '--role', 'data', '--service-account', join(dir, 'sa-offline.json')], {
        GATEWAY_PORT: '0',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dataDir,
        WORKER_POLL_INTERVAL: '1s',
        GATEWAY_LOG_LEVEL: 'error',
        GATEWAY_SHUTDOWN_GRACE: '1s',
      }),
    );
    expect(node.controller.status.source).toBe('disk-cache');
    await servesByok(node.inferenceUrl);
    for (const f of filesUnder(dataDir))
      expect({ file: f, leaked: leaked(readFileSync(f).toString('latin1')) }).toEqual({ file: f, leaked: [] });
  }, 30_000);
});
