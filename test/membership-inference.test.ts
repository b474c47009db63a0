import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Issue 7, defect 6: a user token for a project works on the inference API only while its user is
 * a member of that project. Memberships reach the data plane through the configuration snapshot,
 * so a removed member is refused within the propagation time, and a re-added one works again.
 * The default project is the customer-wide one (see docs/security.md, "Tenancy"): its tokens need no
 * membership, as CreateUserToken issues them without one.
 */

let tg: TestGateway;
const C = 'members-co';
const MODEL = 'member-echo';

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: C });
  await tg.must(admin('CreateProject'), { customerId: C, projectId: 'web' });
  const m = (await tg.must(admin('CreateModel'), { model: MODEL, provider: 'echo', capabilities: ['chat'] })) as { model: { id: string } };
  for (const projectId of ['web', 'default']) {
    await tg.must(admin('AddProjectModel'), { customerId: C, projectId, modelId: m.model.id });
    await tg.must(admin('CreateProviderConnection'), { customerId: C, projectId, name: 'echo', provider: 'echo' });
    await tg.must(admin('CreateRoute'), { customerId: C, projectId, model: MODEL, targets: [{ connection: 'echo', model: 'echo' }] });
  }
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

const chat = (token: string) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
  });

const tokenFor = async (userId: string, projectId?: string): Promise<string> =>
  String(
    (
      await tg.must(admin('CreateUserToken'), {
        customerId: C,
        workspaceId: 'w',
        userId,
        organizationUnit: 'eng',
        role: 'developer',
        ...(projectId ? { projectId } : {}),
      })
    ).accessToken,
  );

/** Polls until the status is one of `want` (the propagation time), or gives up after `ms`. */
const statusWithin = async (token: string, want: number[], ms = 3000): Promise<number> => {
  const until = Date.now() + ms;
  let status = 0;
  do {
    const r = await chat(token);
    await r.body?.cancel();
    status = r.status;
    if (want.includes(status)) return status;
    await Bun.sleep(50);
  } while (Date.now() < until);
  return status;
};

describe('user tokens follow project membership on the inference API', () => {
  test('member → 200; RemoveProjectMember → refused within the propagation time; re-added → 200 again', async () => {
    await tg.must(admin('AddProjectMember'), { customerId: C, projectId: 'web', userId: 'alice', role: 'member' });
    const token = await tokenFor('alice', 'web');
    expect((await chat(token)).status).toBe(200);

    await tg.must(admin('RemoveProjectMember'), { customerId: C, projectId: 'web', userId: 'alice' });
    expect(await statusWithin(token, [401, 403])).toBeOneOf([401, 403]);
    const refused = await chat(token);
    expect(refused.status).toBeOneOf([401, 403]);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');

    await tg.must(admin('AddProjectMember'), { customerId: C, projectId: 'web', userId: 'alice', role: 'admin' });
    expect(await statusWithin(token, [200])).toBe(200);
  });

  test('a project deleted and re-created with the same slug: the old membership and token are gone', async () => {
    await tg.must(admin('AddProjectMember'), { customerId: C, projectId: 'web', userId: 'bob', role: 'member' });
    const token = await tokenFor('bob', 'web');
    expect((await chat(token)).status).toBe(200);
    await tg.must(admin('DeleteProject'), { customerId: C, projectId: 'web' });
    await tg.must(admin('CreateProject'), { customerId: C, projectId: 'web' });
    expect((await chat(token)).status).toBe(401);
  });

  test('the default project: a token without a project claim needs no membership (documented)', async () => {
    const token = await tokenFor('carol');
    expect((await chat(token)).status).toBe(200);
  });

  test("a deleted customer's user token does not work for a new customer of the same slug", async () => {
    await tg.must(admin('CreateCustomer'), { customerId: 'reborn' });
    const m = (await tg.must(admin('ListModels'), { pageSize: 1000 })) as { models: { id: string; model: string }[] };
    const modelId = m.models.find((x) => x.model === MODEL)?.id;
    const serve = async () => {
      await tg.must(admin('AddProjectModel'), { customerId: 'reborn', projectId: 'default', modelId });
      await tg.must(admin('CreateProviderConnection'), { customerId: 'reborn', projectId: 'default', name: 'echo', provider: 'echo' });
      await tg.must(admin('CreateRoute'), {
        customerId: 'reborn',
        projectId: 'default',
        model: MODEL,
        targets: [{ connection: 'echo', model: 'echo' }],
      });
    };
    await serve();
    const issue = async (impersonate: boolean) =>
      String(
        (
          await tg.must(admin('CreateUserToken'), {
            customerId: 'reborn',
            workspaceId: 'w',
            userId: 'dave',
            organizationUnit: 'o',
            role: 'r',
            ...(impersonate ? { impersonate: true, impersonationMetadata: { impersonatorKey: 'ops' } } : {}),
          })
        ).accessToken,
      );
    const persisted = await issue(false);
    const impersonation = await issue(true);
    expect((await chat(persisted)).status).toBe(200);
    expect((await chat(impersonation)).status).toBe(200);
    await tg.must(admin('DeleteCustomer'), { customerId: 'reborn' });
    await tg.must(admin('CreateCustomer'), { customerId: 'reborn' });
    await serve();
    expect((await chat(persisted)).status).toBe(401);
    expect((await chat(impersonation)).status).toBe(401);
    // and on the management API
    expect((await tg.call(admin('GetCustomer'), { customerId: 'reborn' }, persisted)).status).toBe(401);
    expect((await tg.call(admin('GetCustomer'), { customerId: 'reborn' }, impersonation)).status).toBe(401);
  });
});
