import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin } from './support/gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * The model calls the gateway makes itself for a Responses request with a hosted `mcp` tool (one
 * per round, data-plane/hosted-mcp/run.ts) go through the project's circuit breakers as every
 * other request's do (contract §14): their failures count, and a target whose breaker is open gets
 * none of them. Issue 44: they bypassed the breakers (each round paid the failing target again and
 * the breaker never learnt of it).
 */

let w: World;
let alpha: TestMcpServer;
const acme = { customerId: 'acme', projectId: 'default' };

beforeAll(async () => {
  w = await startWorld();
  alpha = startStreamableServer('a', { bearer: 'alpha-secret' });
  await w.tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: alpha.url, authType: 'bearer', authValue: 'alpha-secret' });
  await w.tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'alpha' });
  await w.tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'tools', servers: [{ serverId: 'alpha', prefix: 'alpha' }] });
  await w.tg.must(admin('UpsertProjectSetting'), {
    ...acme,
    settingName: 'circuit-breaker',
    settingValue: '{"failures": 2, "openSeconds": 60}',
  });
  const m = (await w.tg.must(admin('CreateModel'), {
    model: 'r-hosted',
    provider: 'openai',
    inputPricePerMillion: 1,
    outputPricePerMillion: 1,
  })) as { model: { id: string } };
  await w.tg.must(admin('AddProjectModel'), { ...acme, modelId: m.model.id });
  await w.tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    model: 'r-hosted',
    targets: [
      { connection: 'mock-openai', model: 'hosted-down', priority: 0 },
      { connection: 'mock-openai', model: 'hosted-up', priority: 1 },
    ],
  });
  w.oa.script((r) =>
    r.body.model === 'hosted-down'
      ? { status: 500, errorBody: JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }) }
      : { text: `served by ${String(r.body.model)}`, usage: { input: 3, output: 2 } },
  );
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  await alpha?.stop();
});

const hosted = async (stream: boolean): Promise<{ status: number; text: string }> => {
  const r = await fetch(`${w.tg.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'r-hosted',
      input: 'hello',
      stream,
      tools: [{ type: 'mcp', server_label: 'docs', server_url: `${w.tg.url}/mcp/tools`, require_approval: 'never' }],
    }),
  });
  return { status: r.status, text: await r.text() };
};
const down = () => w.oa.requests.filter((r) => r.body.model === 'hosted-down').length;

describe('hosted-MCP model calls and the circuit breakers', () => {
  test('their failures open the target, and an open target gets none of them (answered and streamed)', async () => {
    const first = await hosted(false);
    expect(first.status).toBe(200);
    expect(first.text).toContain('served by hosted-up');
    expect(first.text).toContain('mcp_list_tools');
    const second = await hosted(true);
    expect(second.status).toBe(200);
    expect(second.text).toContain('served by hosted-up');
    expect(down()).toBe(2);
    const h = (await w.tg.must(admin('GetTargetHealth'), acme)) as {
      targets: { upstreamModel: string; state: string; reason?: string; failures: number }[];
    };
    expect(h.targets.find((t) => t.upstreamModel === 'hosted-down')).toMatchObject({ state: 'OPEN', reason: 'failures', failures: 2 });
    for (const stream of [false, true, false]) {
      const r = await hosted(stream);
      expect(r.status).toBe(200);
      expect(r.text).toContain('served by hosted-up');
    }
    expect(down()).toBe(2);
  });
});
