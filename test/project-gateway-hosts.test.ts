import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataNode } from '../src/app-data.ts';
import { hostOfUrl, normalizeHost } from '../src/core/hosts.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startSeparatePlane } from './support/data-node.ts';

/**
 * Project gateways served by host (contract §5, issue 13 item 7), on the embedded data plane and on
 * a separate data plane (`--role data`, in process, real listeners): the request's `Host` selects a
 * project gateway and so the projects attached to it, for inference and `GET /v1/models`; a host
 * that selects nothing is served as before. A SetWorkspaceURL with triggerUpdate (PROXY_URL) makes
 * the data plane adopt the URL: its host serves the workspace's project, /readyz reports it.
 */

type Body = Record<string, unknown>;
let tg: TestGateway;
let node: DataNode;
let dir: string;
const keys: Record<'web' | 'api' | 'other', string> = { web: '', api: '', other: '' };
let gatewayId = '';
let workspaceUuid = '';

/** Where both planes stand (a timed-out wait says it: a propagation failure is then readable from the log). */
const planes = async (): Promise<string> => {
  const embedded = tg?.gw.controller.status;
  const separate = node?.controller.status;
  const readiness = node ? await readyz().catch((e: unknown) => String(e)) : undefined;
  return JSON.stringify({ embedded, separate, readiness });
};

/**
 * Waits for a propagated change. A held Pull answers when a change commits (milliseconds); its
 * wait ends after 20 s in any case, so 25 s still proves the change arrives even on a slow machine.
 */
const until = async <T>(what: string, fn: () => Promise<T | undefined>, ms = 25_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}; ${await planes()}`);
    await Bun.sleep(50);
  }
};

const chat = async (base: string, key: string, host?: string): Promise<{ status: number; body: Body }> => {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(host ? { host } : {}) },
    body: JSON.stringify({ model: 'echo-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as Body };
};
const models = async (base: string, key: string, host?: string): Promise<{ status: number; body: Body }> => {
  const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}`, ...(host ? { host } : {}) } });
  return { status: res.status, body: (await res.json()) as Body };
};
const codeOf = (b: Body): unknown => (b.error as Body | undefined)?.code;
const readyz = async (): Promise<Body> => (await (await fetch(`${node.inferenceUrl}/readyz`)).json()) as Body;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-hosts-'));
  tg = await startTestGateway({ WORKER_POLL_INTERVAL: '100ms' });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  const modelId = String(((await tg.must(admin('CreateModel'), { model: 'echo-chat', provider: 'echo' })).model as Body).id);
  for (const projectId of ['web', 'api', 'other'] as const) {
    await tg.must(admin('CreateProject'), { customerId: 'acme', projectId });
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId, modelId });
    await tg.must(admin('CreateProviderConnection'), { customerId: 'acme', projectId, name: 'e', provider: 'echo' });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      projectId,
      model: 'echo-chat',
      targets: [{ connection: 'e', model: 'echo' }],
    });
    keys[projectId] = String(
      (await tg.must(apikeyOp('CreateApiKey'), { name: projectId, enterpriseContext: { customerId: 'acme', projectId } })).apiKey,
    );
  }
  workspaceUuid = String(
    ((await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'web' })).workspace as Body).id,
  );
  const gw = (
    await tg.must(admin('CreateProjectGateway'), {
      customerId: 'acme',
      workspaceId: 'edge',
      projectGatewayId: 'gw-api',
      url: 'https://API.Example.com:8443/v1',
    })
  ).projectGateway as Body;
  gatewayId = String(gw.id);
  await tg.must(admin('AttachProjectGatewayProject'), { id: gatewayId, projectId: 'api' });
  node = await startSeparatePlane(tg, dir, 'acme', 'edge', '100ms');
  // Both planes serve the attachment before the tests start.
  await until('gateway host served', async () =>
    (await chat(tg.url, keys.api, 'api.example.com')).status === 200 &&
    (await chat(node.inferenceUrl, keys.api, 'api.example.com')).status === 200
      ? true
      : undefined,
  );
}, 60_000);

afterAll(async () => {
  await node?.stop(1000);
  await tg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('project gateways served by host', () => {
  for (const plane of ['embedded', 'separate'] as const) {
    const base = () => (plane === 'embedded' ? tg.url : node.inferenceUrl);

    test(`${plane}: the gateway's host serves its attached projects only (inference and /v1/models), any case and port`, async () => {
      for (const host of ['api.example.com', 'API.EXAMPLE.COM:8443', 'api.example.com.']) {
        const ok = await chat(base(), keys.api, host);
        expect(ok.status).toBe(200);
        const listed = await models(base(), keys.api, host);
        expect(listed.status).toBe(200);
        expect((listed.body.data as Body[]).map((m) => m.id)).toEqual(['echo-chat']);
      }
      // (`other` is not on the separate data plane at all: its key is unknown there.)
      for (const key of plane === 'embedded' ? [keys.web, keys.other] : [keys.web]) {
        const refused = await chat(base(), key, 'api.example.com');
        expect(refused.status).toBe(404);
        expect(codeOf(refused.body)).toBe('project_not_served');
        expect(String((refused.body.error as Body).message)).toContain("project gateway 'gw-api'");
        const listed = await models(base(), key, 'api.example.com');
        expect(listed.status).toBe(404);
        expect(codeOf(listed.body)).toBe('project_not_served');
      }
    });
  }

  test('embedded: a host that selects nothing serves every project, as before', async () => {
    for (const key of [keys.web, keys.api, keys.other]) expect((await chat(tg.url, key)).status).toBe(200);
    expect((await chat(tg.url, keys.other, 'unknown.example.com')).status).toBe(200);
  });

  test("separate: a host that selects nothing serves the workspace's project only", async () => {
    expect((await chat(node.inferenceUrl, keys.web)).status).toBe(200);
    const attachedElsewhere = await chat(node.inferenceUrl, keys.api, 'unknown.example.com');
    expect(attachedElsewhere.status).toBe(404);
    expect(codeOf(attachedElsewhere.body)).toBe('project_not_served');
    // Another project's key is not even on this data plane.
    expect((await chat(node.inferenceUrl, keys.other)).status).toBe(401);
  });

  test('attaching, detaching and re-pointing a gateway reach both planes', async () => {
    await tg.must(admin('AttachProjectGatewayProject'), { id: gatewayId, projectId: 'other' });
    for (const base of [tg.url, node.inferenceUrl])
      await until('attached', async () => ((await chat(base, keys.other, 'api.example.com')).status === 200 ? true : undefined));
    await tg.must(admin('DetachProjectGatewayProject'), { id: gatewayId, projectId: 'other' });
    // Detached, the project is not served at the host; the separate plane no longer holds it at all.
    await until('detached (embedded)', async () => ((await chat(tg.url, keys.other, 'api.example.com')).status === 404 ? true : undefined));
    await until('detached (separate)', async () =>
      (await chat(node.inferenceUrl, keys.other, 'api.example.com')).status === 401 ? true : undefined,
    );
    await tg.must(admin('SetProjectGatewayURL'), { id: gatewayId, url: 'https://llm.example.org' });
    for (const base of [tg.url, node.inferenceUrl])
      await until('re-pointed', async () => ((await chat(base, keys.api, 'llm.example.org')).status === 200 ? true : undefined));
    // The old host selects nothing any more: served as any other host.
    expect((await chat(tg.url, keys.web, 'api.example.com')).status).toBe(200);
    expect((await chat(node.inferenceUrl, keys.api, 'api.example.com')).status).toBe(404);
    expect((await chat(node.inferenceUrl, keys.web, 'api.example.com')).status).toBe(200);
  }, 120_000);

  test('PROXY_URL: a workspace URL set with triggerUpdate is adopted by the data plane; without it, only stored', async () => {
    await tg.must(admin('SetWorkspaceURL'), { id: workspaceUuid, url: 'https://edge.example.net', triggerUpdate: false });
    // A later change makes both planes rebuild; the URL stored without triggerUpdate is not acted on.
    await tg.must(admin('AttachProjectGatewayProject'), { id: gatewayId, projectId: 'other' });
    for (const base of [tg.url, node.inferenceUrl])
      await until('rebuilt', async () => ((await chat(base, keys.other, 'llm.example.org')).status === 200 ? true : undefined));
    expect((await readyz()).publicUrl).toBeNull();
    expect((await chat(tg.url, keys.other, 'edge.example.net')).status).toBe(200);

    await tg.must(admin('SetWorkspaceURL'), { id: workspaceUuid, url: 'https://Edge.Example.net:9443/', triggerUpdate: true });
    await until('adopted by the separate plane', async () =>
      (await readyz()).publicUrl === 'https://Edge.Example.net:9443/' ? true : undefined,
    );
    // The embedded plane: the workspace's host serves the workspace's project only.
    const refused = await until('adopted by the embedded plane', async () => {
      const r = await chat(tg.url, keys.other, 'edge.example.net');
      return r.status === 404 ? r : undefined;
    });
    expect(codeOf(refused.body)).toBe('project_not_served');
    expect(String((refused.body.error as Body).message)).toContain("workspace 'edge'");
    expect((await chat(tg.url, keys.web, 'edge.example.net:9443')).status).toBe(200);
    // The separate plane: its own host serves its workspace's project.
    expect((await chat(node.inferenceUrl, keys.web, 'edge.example.net')).status).toBe(200);
    expect((await chat(node.inferenceUrl, keys.api, 'edge.example.net')).status).toBe(404);
  }, 120_000);
});

test('host normalisation: the Host header and a stored URL meet on the same key', () => {
  expect(normalizeHost('API.Example.com:8443')).toBe('api.example.com');
  expect(normalizeHost('api.example.com.')).toBe('api.example.com');
  expect(normalizeHost('[::1]:8080')).toBe('[::1]');
  expect(normalizeHost('')).toBe('');
  expect(hostOfUrl('https://API.Example.com:8443/v1')).toBe('api.example.com');
  expect(hostOfUrl('gw.example.org')).toBe('gw.example.org');
  expect(hostOfUrl('http://[::1]:9000/')).toBe('[::1]');
  expect(hostOfUrl('ftp://x.example')).toBeUndefined();
});
