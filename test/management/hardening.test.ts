import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Body, isInvalid, type Res, tableDigest } from './support.ts';

/**
 * Hostile and nonsense input on the management API (issue 7, defects 9 and 10): lone surrogates,
 * extreme timestamps, malformed setting values, look-alike model names — each `invalid_argument`
 * naming the field, never a 500, nothing stored — and the permission check before any of them.
 */

let tg: TestGateway;
const tokens: Record<string, string> = {};
const web = { customerId: 'acme', projectId: 'web' };

const ok = async (op: string, body: Body) => (await tg.must(admin(op), body)) as Record<string, Body>;
const call = (op: string, body: Body | string, token?: string): Promise<Res> => tg.call(admin(op), body, token);
const issue = async (userId: string, customerId: string) =>
  String((await ok('CreateUserToken', { customerId, workspaceId: 'ws1', userId, organizationUnit: 'eng', role: 'developer' })).accessToken);

beforeAll(async () => {
  tg = await startTestGateway();
  await ok('CreateCustomer', { customerId: 'acme' });
  await ok('CreateCustomer', { customerId: 'globex' });
  await ok('CreateProject', web);
  await ok('AddProjectMember', { ...web, userId: 'alice', role: 'admin' });
  await ok('AddProjectMember', { ...web, userId: 'bob', role: 'member' });
  await ok('AddProjectMember', { customerId: 'globex', projectId: 'default', userId: 'dave', role: 'admin' });
  tokens.alice = await issue('alice', 'acme');
  tokens.bob = await issue('bob', 'acme');
  tokens.dave = await issue('dave', 'globex');
  await ok('CreateModel', { model: 'gpt-4o', provider: 'openai' });
  await ok('CreateProviderConnection', { ...web, name: 'conn1', provider: 'echo' });
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

/** Expects every case rejected as invalid_argument naming `field`, with nothing stored. */
const expectRejected = async (cases: [op: string, body: Body | string, field: string][]) => {
  const before = await tableDigest(tg);
  const failures: string[] = [];
  for (const [op, body, field] of cases) {
    const r = await call(op, body);
    if (!isInvalid(r, field))
      failures.push(
        `${op} ${typeof body === 'string' ? body : JSON.stringify(body)}: want invalid_argument naming '${field}', got ${r.status} ${JSON.stringify(r.body)}`,
      );
  }
  expect(failures).toEqual([]);
  expect(await tableDigest(tg)).toEqual(before);
};

describe('lone surrogates', () => {
  test('in labels, options, names, map keys and nested strings of any operation: invalid_argument naming the field', async () => {
    // Raw JSON text: `\\udead` is the escape a client sends, decoded into a lone UTF-16 surrogate.
    await expectRejected([
      ['CreateCustomer', '{"customerId":"sur","labels":{"k":"x\\udead"}}', 'labels.k'],
      ['CreateCustomer', '{"customerId":"sur","labels":{"k\\ud800":"v"}}', 'labels'],
      ['CreateCustomer', '{"customerId":"sur","name":"\\udc00"}', 'name'],
      ['CreateCustomer', '{"customerId":"sur","description":"ok \\ud83d then not"}', 'description'],
      ['UpdateCustomer', '{"customerId":"acme","labels":{"team":"\\udfff"}}', 'labels.team'],
      [
        'CreateProviderConnection',
        '{"customerId":"acme","projectId":"web","name":"c2","provider":"echo","options":{"region":"\\ud800x"}}',
        'options.region',
      ],
      [
        'CreateProviderConnection',
        '{"customerId":"acme","projectId":"web","name":"c2","provider":"openai","options":{"headers":{"x-a":"\\udead"}}}',
        'options.headers.x-a',
      ],
      [
        'CreateProviderConnection',
        '{"customerId":"acme","projectId":"web","name":"c2","provider":"openai","options":{"beta":["a","\\udead"]}}',
        'options.beta.1',
      ],
      ['CreateProviderConnection', '{"customerId":"acme","projectId":"web","name":"c2","provider":"echo","apiKey":"sk-\\udead"}', 'apiKey'],
      [
        'UpsertProjectSetting',
        '{"customerId":"acme","projectId":"web","settingName":"rate-limit","settingValue":"\\udead"}',
        'settingValue',
      ],
      ['AddProjectMember', '{"customerId":"acme","projectId":"web","userId":"u\\udead","role":"member"}', 'userId'],
    ]);
  });

  test('well-formed surrogate pairs (emoji) are accepted and stored as sent', async () => {
    const r = await call(
      'CreateCustomer',
      '{"customerId":"emoji","name":"\\ud83d\\ude00 smile","labels":{"\\ud83d\\ude00":"\\ud83d\\ude00"}}',
    );
    expect(r.status).toBe(200);
    expect((r.body.customer as Body).name).toBe('\u{1F600} smile');
    expect((r.body.customer as Body).labels).toEqual({ '\u{1F600}': '\u{1F600}' });
  });
});

describe('timestamps', () => {
  const BAD = [
    '+275760-09-13T00:00:00Z',
    '-271821-04-20T00:00:00Z',
    '9999999-01-01T00:00:00Z',
    '+010000-01-01T00:00:00Z',
    '0000-12-31T23:59:59Z',
    '2024-02-30T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:01Z',
    '2024-01-01',
    'yesterday',
    '2024-01-01T00:00:00',
  ];
  const GOOD = [
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '2024-02-29T12:00:00+02:00',
    '2024-01-01t00:00:00z',
    '2026-01-02T03:04:05.123456Z',
  ];

  test('extreme and impossible times in SearchRequestRecords and GetUsage: invalid_argument naming the field', async () => {
    const cases: [string, Body, string][] = [];
    for (const op of ['SearchRequestRecords', 'GetUsage'])
      for (const field of ['startTime', 'endTime']) for (const v of BAD) cases.push([op, { customerId: 'acme', [field]: v }, field]);
    await expectRejected(cases);
  });

  test('the whole range PostgreSQL and JavaScript share (years 0001..9999), offsets included, is accepted', async () => {
    for (const op of ['SearchRequestRecords', 'GetUsage'])
      for (const v of GOOD) {
        const r = await call(op, { customerId: 'acme', startTime: v, endTime: v });
        expect({ op, v, status: r.status, body: r.status === 200 ? {} : r.body }).toEqual({ op, v, status: 200, body: {} });
      }
  });

  test('a crafted page token carrying an extreme time is invalid_argument naming pageToken', async () => {
    for (const c of ['+200000-01-01T00:00:00.000Z', '-100000-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const token = Buffer.from(JSON.stringify({ c, i: '00000000-0000-4000-8000-000000000000' })).toString('base64url');
      expect(isInvalid(await call('SearchRequestRecords', { customerId: 'acme', pageToken: token }), 'pageToken')).toBe(true);
      expect(isInvalid(await call('ListCustomers', { pageToken: token }), 'pageToken')).toBe(true);
    }
  });
});

describe('setting values (contract §3.2)', () => {
  const upsert = (settingName: string, settingValue: string) =>
    ['UpsertProjectSetting', { ...web, settingName, settingValue }, 'settingValue'] as [string, Body, string];

  test('rate-limit: not JSON, or not the fixed shape: invalid_argument naming settingValue', async () => {
    await expectRejected(
      [
        'not-a-rate',
        '100/m',
        '',
        '5',
        '[]',
        'null',
        '{}',
        '{"per":"project"}',
        '{"requestsPerMinute":0}',
        '{"requestsPerMinute":-5}',
        '{"requestsPerMinute":1.5}',
        '{"requestsPerMinute":"10"}',
        '{"tokensPerMinute":1e300}',
        '{"requestsPerMinute":10,"per":"customer"}',
        '{"requestsPerMinute":10,"burst":3}',
        '{"requestsPerMinute":10,"__proto__":{"per":"project"}}',
        '{"requestsPerMinute":10',
      ].map((v) => upsert('rate-limit', v)),
    );
  });

  test('rate-limit: valid values are stored as given', async () => {
    for (const v of [
      '{"requestsPerMinute":600}',
      '{"tokensPerMinute":100000,"per":"project"}',
      '{"requestsPerMinute":1,"tokensPerMinute":2,"per":"api_key"}',
      ' { "requestsPerMinute" : 5 } ',
    ]) {
      const r = await call('UpsertProjectSetting', { ...web, settingName: 'rate-limit', settingValue: v });
      expect({ v, status: r.status }).toEqual({ v, status: 200 });
      expect((r.body.setting as Body).settingValue).toBe(v);
    }
  });

  test('global-fallback: not the fixed shape: invalid_argument naming settingValue', async () => {
    await expectRejected(
      [
        'conn1/gpt-4o',
        '{}',
        '{"targets":[]}',
        '{"targets":{}}',
        '{"model":"x"}',
        '{"targets":[{"connection":"conn1"}]}',
        '{"targets":[{"connection":"conn1","model":""}]}',
        '{"targets":[{"connection":"bad name","model":"gpt-4o"}]}',
        '{"targets":[{"connection":"","model":"gpt-4o"}]}',
        '{"targets":[{"connection":"conn1","model":"gpt-4o","weight":1}]}',
        '{"targets":[{"connection":"conn1","model":"gpt-4o"}],"extra":true}',
        '{"targets":["conn1"]}',
      ].map((v) => upsert('global-fallback', v)),
    );
  });

  test('global-fallback: a valid list is stored', async () => {
    const v = '{"targets":[{"connection":"conn1","model":"gpt-4o"},{"connection":"conn-2","model":"meta-llama/Llama-3-70b"}]}';
    const r = await call('UpsertProjectSetting', { ...web, settingName: 'global-fallback', settingValue: v });
    expect(r.status).toBe(200);
  });
});

describe('model names', () => {
  const HOSTILE: [string, string][] = [
    ['gpt\u200b-4o', 'zero-width space'],
    ['gpt-4o\u200d', 'zero-width joiner'],
    ['\ufeffgpt-4o', 'byte-order mark'],
    ['gpt\u2060-4o', 'word joiner'],
    ['gpt-\u202eo4', 'right-to-left override'],
    ['gpt-\u2066x\u2069', 'bidi isolate'],
    ['gpt\u00ad4o', 'soft hyphen'],
    ['gpt-4o\u0007', 'control character'],
    ['gpt-4o\n', 'newline'],
    ['gpt 4o', 'space'],
    ['g\u0440t-4o', 'Latin with a Cyrillic er'],
    ['gpt-4\u03bf', 'Latin with a Greek omicron'],
    ['\u0433\u0440\u0442', 'all Cyrillic'],
    ['ｇｐｔ-4o', 'fullwidth letters'],
  ];
  const REAL = [
    'gpt-4o-mini',
    'claude-3-5-sonnet@20240620',
    'meta-llama/Llama-3-70b',
    'accounts/fireworks/models/x',
    'anthropic.claude-3-haiku-20240307-v1:0',
    'llama3.1:8b',
    '@cf/meta/llama-3.1-8b-instruct',
    'a+b_c',
  ];

  test('CreateModel refuses invisible, bidi, control and mixed-script characters, naming model', async () => {
    await expectRejected(HOSTILE.map(([m]) => ['CreateModel', { model: m, provider: 'openai' }, 'model'] as [string, Body, string]));
  });

  test('real provider model ids are accepted', async () => {
    for (const m of REAL) {
      const r = await call('CreateModel', { model: m, provider: 'openai' });
      expect({ m, status: r.status }).toEqual({ m, status: 200 });
    }
  });

  test('route model and target model follow the same rule', async () => {
    await expectRejected(
      HOSTILE.slice(0, 6).flatMap(([m]) => [
        ['CreateRoute', { ...web, model: m, targets: [{ connection: 'conn1', model: 'x' }] }, 'model'],
        ['CreateRoute', { ...web, model: 'gpt-4o', targets: [{ connection: 'conn1', model: m }] }, 'targets.0.model'],
        ['UpdateRoute', { ...web, model: 'gpt-4o', targets: [{ connection: 'conn1', model: m }] }, 'targets.0.model'],
      ]) as [string, Body, string][],
    );
  });
});

describe('permission before validation', () => {
  const code = (r: Res) => `${r.status} ${String(r.body.code)}`;

  test('a caller without permission gets permission_denied, never a validation error naming a field', async () => {
    const cases: [string, Body | string, string][] = [
      // bob is a member of acme/web: reads only
      ['UpsertProjectSetting', { ...web, settingName: 'rate-limit', settingValue: 'not-a-rate' }, tokens.bob as string],
      ['UpsertProjectSetting', { ...web, settingName: 'bogus', settingValue: 'x' }, tokens.bob as string],
      ['CreateRoute', { ...web, model: 'gpt\u200b-4o', targets: [], surprise: 1 }, tokens.bob as string],
      ['UpdateProject', '{"customerId":"acme","projectId":"web","labels":{"k":"\\udead"}}', tokens.bob as string],
      // dave belongs to another customer
      ['GetProject', { ...web, surprise: 1 }, tokens.dave as string],
      ['SearchRequestRecords', { customerId: 'acme', startTime: '+275760-09-13T00:00:00Z' }, tokens.dave as string],
      ['UpdateCustomer', { customerId: 'acme', name: 'x'.repeat(300) }, tokens.dave as string],
      // platform-admin-only operations
      ['CreateModel', { model: 'gpt\u200b-4o', provider: 'BAD PROVIDER', surprise: 1 }, tokens.alice as string],
      ['CreateCustomer', { customerId: 'NOT A SLUG' }, tokens.alice as string],
      // the scope cannot be determined from an invalid body
      ['GetProject', { customerId: 5, projectId: ['web'] }, tokens.alice as string],
      ['GetProjectGateway', { id: 'not-a-uuid', projectId: 'web' }, tokens.alice as string],
      ['GetProjectGateway', { id: { $ne: null }, projectId: 'web' }, tokens.alice as string],
      ['GetDataplane', { id: 42 }, tokens.alice as string],
    ];
    const got = await Promise.all(cases.map(async ([op, body, token]) => `${op}: ${code(await call(op, body, token))}`));
    expect(got).toEqual(cases.map(([op]) => `${op}: 403 permission_denied`));
  });

  test('permitted callers and the platform admin still get precise validation errors', async () => {
    const alice = await call('UpsertProjectSetting', { ...web, settingName: 'rate-limit', settingValue: 'not-a-rate' }, tokens.alice);
    expect(isInvalid(alice, 'settingValue')).toBe(true);
    const aliceLabels = await call('UpdateProject', '{"customerId":"acme","projectId":"web","labels":{"k":"\\udead"}}', tokens.alice);
    expect(isInvalid(aliceLabels, 'labels.k')).toBe(true);
    const aliceUnknown = await call('GetProject', { ...web, surprise: 1 }, tokens.alice);
    expect(isInvalid(aliceUnknown, 'surprise')).toBe(true);
    const bobRead = await call('SearchRequestRecords', { ...web, startTime: '+275760-09-13T00:00:00Z' }, tokens.bob);
    expect(isInvalid(bobRead, 'startTime')).toBe(true);
    expect(isInvalid(await call('GetProject', { customerId: 5, projectId: ['web'] }), 'customerId')).toBe(true);
    expect(isInvalid(await call('GetProjectGateway', { id: 'not-a-uuid' }), 'id')).toBe(true);
    expect(isInvalid(await call('CreateModel', { model: 'gpt\u200b-4o', provider: 'openai' }), 'model')).toBe(true);
  });

  test('no credentials: unauthenticated before anything else, malformed JSON included', async () => {
    const r = await call('UpsertProjectSetting', '{"customerId":"acme","projectId":"web","settingName":"x","settingValue":"\\udead"}', '');
    expect(code(r)).toBe('401 unauthenticated');
    for (const body of ['{"customerId":', 'not json', '', '[1]']) {
      expect(code(await call('UpdateProject', body, ''))).toBe('401 unauthenticated');
      expect(code(await call('UpdateProject', body, tokens.bob))).toBe('403 permission_denied');
      expect(isInvalid(await call('UpdateProject', body), 'body')).toBe(true);
    }
  });
});
