import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { sql } from 'drizzle-orm';
import type { DataNode } from '../src/app-data.ts';
import { startTestAgent, type TestAgent } from './support/a2a-agent.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * A separate data plane (`serve --role data`) serving an A2A agent (contract §12) from the pulled,
 * sealed document: the SDK client works against the plane, the catalog's credential reaches the
 * agent and never the plane's files, the audit trail or the store in plaintext; an agent removed
 * from the project and a revoked key are refused within the propagation time.
 */

const SECRET = 'a2a-plane-secret-5e1f0c';
const acme = { customerId: 'acme', projectId: 'default' };
let tg: TestGateway;
let agent: TestAgent;
let apiKey = '';
let keyId = '';

const authed = (key: string): typeof fetch =>
  Object.assign(
    (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${key}`);
      return fetch(input, { ...init, headers });
    },
    { preconnect: fetch.preconnect },
  );

const send = (base: string, text: string) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed(apiKey) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed(apiKey) }),
    }),
  )
    .createFromUrl(`${base}/a2a/echo/`)
    .then((c) =>
      c.sendMessage({
        message: {
          messageId: crypto.randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
        tenant: '',
      }),
    );

beforeAll(async () => {
  agent = startTestAgent('Echo agent', { bearer: SECRET });
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  const k = (await tg.must(apikeyOp('CreateApiKey'), { name: 'a2a', userId: 'u1', enterpriseContext: acme })) as {
    apiKey: string;
    id: string;
  };
  apiKey = k.apiKey;
  keyId = k.id;
  await tg.must(admin('CreateA2aAgent'), { agentId: 'echo', cardUrl: agent.cardUrl, authType: 'bearer', authValue: SECRET });
  await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'echo' });
}, 90_000);

afterAll(async () => {
  await tg?.stop();
  await agent?.stop();
});

describe('a separate data plane serves an A2A agent', () => {
  test('from the sealed document; removal and revocation within the propagation time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-a2a-plane-'));
    let node: DataNode | undefined;
    try {
      await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
      node = await startSeparatePlane(tg, dir, 'acme', 'edge', '100ms');
      const plane = node;
      const deadline = Date.now() + 25_000;
      while (!plane.snapshots.current?.projects.get('acme/default')?.a2aAgents.size) {
        if (Date.now() > deadline) throw new Error('the data plane never served the agent');
        await Bun.sleep(100);
      }
      const task = await send(plane.inferenceUrl, 'via the plane');
      if (!('id' in task && 'status' in task)) throw new Error('expected a task');
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(agent.calls.at(-1)?.get('authorization')).toBe(`Bearer ${SECRET}`);
      expect(JSON.stringify([...agent.calls.flatMap((h) => [...h.values()])])).not.toContain(apiKey);

      const files = (root: string): string[] =>
        readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(root, e.name)) : [join(root, e.name)]));
      const stored = files(join(dir, 'node'));
      expect(stored.length).toBeGreaterThan(0);
      for (const f of stored) expect({ f, leaked: readFileSync(f).toString('latin1').includes(SECRET) }).toEqual({ f, leaked: false });
      const dump = async (q: ReturnType<typeof sql>) => JSON.stringify(await tg.gw.store.db.execute(q));
      expect(await dump(sql`select * from a2a_agents`)).not.toContain(SECRET);
      const audit = await dump(sql`select * from audit_logs`);
      expect(audit).toContain('CreateA2aAgent');
      expect(audit).not.toContain(SECRET);

      const rpc = () =>
        fetch(`${plane.inferenceUrl}/a2a/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'a2a-version': '1.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } }),
        });
      expect((await rpc()).status).toBe(200);
      const until = async (what: string, status: number): Promise<number> => {
        const t0 = Date.now();
        for (;;) {
          const r = await rpc();
          await r.text();
          if (r.status === status) return Date.now() - t0;
          if (Date.now() - t0 > 10_000) throw new Error(`${what}: not within 10 s`);
          await Bun.sleep(50);
        }
      };
      await tg.must(admin('RemoveProjectA2aAgent'), { ...acme, agentId: 'echo' });
      expect(await until('the removed agent answers 404', 404)).toBeLessThan(10_000);
      await tg.must(admin('AddProjectA2aAgent'), { ...acme, agentId: 'echo' });
      expect(await until('the agent is served again', 200)).toBeLessThan(10_000);
      await tg.must(apikeyOp('RevokeApiKey'), { id: keyId, ...acme });
      expect(await until('the revoked key is refused', 401)).toBeLessThan(10_000);
    } finally {
      await node?.stop(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
