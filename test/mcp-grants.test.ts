import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';

/**
 * Contract §7.1 grants: a profile with `grants` lets each caller list and call only the tools granted
 * to it (per API key, per user, per project role), nothing to a caller no grant names; without
 * `grants`, every caller of the project as before. Configured through the management API.
 */

let tg: TestGateway;
let up: TestMcpServer;
const acme = { customerId: 'acme', projectId: 'default' };
const keys: Record<string, { apiKey: string; id: string }> = {};
const tok: Record<string, string> = {};
const ALL = ['a__add', 'a__admin_reset', 'a__ask', 'a__echo', 'a__progress'];

beforeAll(async () => {
  up = startStreamableServer('a', {});
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('AddProjectMember'), { ...acme, userId: 'owen', role: 'admin' });
  await tg.must(admin('AddProjectMember'), { ...acme, userId: 'ann', role: 'member' });
  for (const u of ['owen', 'ann'])
    tok[u] = String(
      (
        await tg.must(admin('CreateUserToken'), {
          customerId: 'acme',
          workspaceId: 'ws',
          userId: u,
          organizationUnit: 'eng',
          role: 'dev',
          projectId: 'default',
        })
      ).accessToken,
    );
  for (const name of ['granted', 'ungranted'])
    keys[name] = (await tg.must(apikeyOp('CreateApiKey'), { name, enterpriseContext: acme })) as { apiKey: string; id: string };
  await tg.must(admin('CreateMcpServer'), { serverId: 'a', url: up.url });
  await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'a' });
  await tg.must(admin('CreateMcpProfile'), {
    ...acme,
    profileId: 'g',
    servers: [{ serverId: 'a' }],
    grants: [
      { principal: `api_key:${keys.granted?.id}`, tools: ['a__echo', 'a__secret*'] },
      { principal: 'role:admin', tools: ['a__*'] },
      { principal: 'user:ann', tools: ['a__add'] },
    ],
  });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'open', servers: [{ serverId: 'a' }] });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  await up?.stop();
});

const listed = async (profile: string, credential: string): Promise<string[]> => {
  const { client } = await connectMcp(`${tg.url}/mcp/${profile}`, credential);
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await client.close();
  }
};
const callable = async (profile: string, credential: string, name: string): Promise<string> => {
  const { client } = await connectMcp(`${tg.url}/mcp/${profile}`, credential);
  try {
    return textOf(await client.callTool({ name, arguments: { text: 't', a: 1, b: 2 } }));
  } catch (e) {
    expect(e).toBeInstanceOf(McpError);
    return `refused: ${String(e)}`;
  } finally {
    await client.close();
  }
};

describe('grants deny by default', () => {
  test('per API key: only the granted tools are listed and callable; a key no grant names sees none', async () => {
    expect(await listed('g', keys.granted?.apiKey ?? '')).toEqual(['a__echo']);
    expect(await callable('g', keys.granted?.apiKey ?? '', 'a__echo')).toBe('a:t');
    expect(await callable('g', keys.granted?.apiKey ?? '', 'a__add')).toContain('refused');
    expect(await listed('g', keys.ungranted?.apiKey ?? '')).toEqual([]);
    expect(await callable('g', keys.ungranted?.apiKey ?? '', 'a__echo')).toContain('not found');
  });

  test('per project role and per user (user tokens)', async () => {
    expect(await listed('g', tok.owen ?? '')).toEqual(ALL);
    expect(await callable('g', tok.owen ?? '', 'a__admin_reset')).toBe('a:reset done');
    expect(await listed('g', tok.ann ?? '')).toEqual(['a__add']);
    expect(await callable('g', tok.ann ?? '', 'a__add')).toBe('3');
    expect(await callable('g', tok.ann ?? '', 'a__echo')).toContain('refused');
  });

  test('a granted glob never reaches a name the server did not list', async () => {
    const before = up.seen.filter((h) => h.rpc === 'tools/call').length;
    expect(await callable('g', keys.granted?.apiKey ?? '', 'a__secret_reset')).toContain('not found');
    expect(up.seen.filter((h) => h.rpc === 'tools/call').length).toBe(before);
  });

  test('without grants every caller of the project sees every tool; GetMcpProfile shows the grants as given', async () => {
    expect(await listed('open', keys.ungranted?.apiKey ?? '')).toEqual(ALL);
    const got = (await tg.must(admin('GetMcpProfile'), { ...acme, profileId: 'g' })) as { profile: { grants?: unknown[] } };
    expect(got.profile.grants).toEqual([
      { principal: `api_key:${keys.granted?.id}`, tools: ['a__echo', 'a__secret*'] },
      { principal: 'role:admin', tools: ['a__*'] },
      { principal: 'user:ann', tools: ['a__add'] },
    ]);
    // A malformed principal is refused, nothing changed.
    const bad = await tg.call(admin('UpdateMcpProfile'), { ...acme, profileId: 'g', grants: [{ principal: 'team:x', tools: ['*'] }] });
    expect(bad.status).toBe(400);
    expect(
      ((await tg.must(admin('GetMcpProfile'), { ...acme, profileId: 'g' })) as { profile: { grants?: unknown[] } }).profile.grants,
    ).toHaveLength(3);
    // Revoking by update: the key's grant removed, its tools go within the propagation time.
    await tg.must(admin('UpdateMcpProfile'), { ...acme, profileId: 'g', grants: [{ principal: 'role:admin', tools: ['a__*'] }] });
    expect(await listed('g', keys.granted?.apiKey ?? '')).toEqual([]);
  });
});
