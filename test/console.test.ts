import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { hasChromium, launchBrowser, shot, type TestBrowser } from './support/browser.ts';
import { ConsolePage } from './support/console-page.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';

/**
 * The web console (contract §10) in Debian's Chromium against a real gateway: everything below is
 * done through the page, by accessible names, except the user token (issued by the admin API) and
 * the inference call (made with the key the console created).
 */

const run = hasChromium();
if (!run) console.warn('console.test.ts: /usr/bin/chromium is absent (apt-get install -y chromium): the browser tests are SKIPPED');

let tg: TestGateway;
let oa: MockUpstream;
let tb: TestBrowser;
let page: Page;
let c: ConsolePage;
let key = '';
let requestId = '';
const UPSTREAM_SECRET = 'sk-upstream-console-secret-42';

beforeAll(async () => {
  if (!run) return;
  oa = startMockUpstream('openai');
  // Audit windows sealed every second, so an entry's inclusion proof can be verified in the test.
  tg = await startTestGateway({ GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s' });
  tb = await launchBrowser();
  page = await tb.context.newPage();
  page.on('dialog', (d) => void d.accept());
  // What the page itself reported, printed so a failure on a loaded machine can be read from the log.
  page.on('pageerror', (e) => console.log(`console page error: ${e.message}`));
  page.on('crash', () => console.log('console page crashed'));
  c = new ConsolePage(page);
}, 60_000);

afterAll(async () => {
  if (!run) return;
  // The page as the last test left it (kept with the others: on a failure, this is what it showed).
  if (page) await shot(page, '99-last').catch(() => undefined);
  await tb?.close();
  await tg?.stop();
  oa?.stop();
});

test.skipIf(!run)('the console is served offline from the management listener with its own script and styles', async () => {
  const res = await fetch(`${tg.adminUrl}/console/`);
  expect(res.status).toBe(200);
  const html = await res.text();
  expect(html).toContain('/console/console.js');
  expect(html).not.toMatch(/https?:\/\//);
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  const js = await fetch(`${tg.adminUrl}/console/console.js`);
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toContain('javascript');
  expect((await js.text()).length).toBeGreaterThan(10_000);
  expect((await fetch(`${tg.adminUrl}/console`)).status).toBe(200);
});

test.skipIf(!run)(
  'admin: sign in, create customer, project, model, connection, route with a fallback and a key in the UI; the key serves inference',
  async () => {
    await page.goto(`${tg.adminUrl}/console/`);
    // Every resource the page loads is counted by the browser itself (Resource Timing), with room for
    // the status polls: no Playwright request events (their objects raced responses on a loaded machine).
    await page.evaluate('performance.setResourceTimingBufferSize(100000)');
    await c.axe('01-sign-in');
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#token-error').waitFor();
    expect(await page.locator('#token-error').textContent()).toBe('invalid credentials');
    expect(await page.getByLabel('Token').getAttribute('aria-invalid')).toBe('true');
    await c.signIn(ADMIN_TOKEN);

    await c.go('Customers');
    await c.openCreate('Create customer');
    await page.getByLabel('Customer ID', { exact: true }).fill('acme', { timeout: 5000 });
    await page.getByLabel('Name', { exact: true }).fill('Acme Inc');
    await page.getByRole('button', { name: 'Create customer' }).click();
    await page.getByRole('cell', { name: 'acme', exact: true }).waitFor();
    // Edit: the form starts with the saved values; the saved value is shown at once.
    await page.getByRole('button', { name: 'Edit acme' }).click();
    const editCustomer = page.locator('#edit-UpdateCustomer');
    expect(await editCustomer.getByLabel('Name', { exact: true }).inputValue()).toBe('Acme Inc');
    await editCustomer.getByLabel('Description', { exact: true }).fill('the first customer');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('cell', { name: 'the first customer', exact: true }).waitFor();
    await c.axe('02-customers');

    await c.go('Projects');
    await page.getByLabel('Customer', { exact: true }).selectOption('acme');
    await c.openCreate('Create project');
    await page.getByLabel('Project ID', { exact: true }).fill('web');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('cell', { name: 'web', exact: true }).waitFor();
    await page.getByLabel('Project', { exact: true }).selectOption('web');

    await c.go('Catalog');
    await c.openCreate('Add model');
    const catalog = page.locator('#form-CreateModel');
    await catalog.getByLabel('Model', { exact: true }).fill('gpt-mini');
    await catalog.getByLabel('Provider', { exact: true }).fill('openai');
    await catalog.getByLabel('Mode', { exact: true }).fill('chat');
    await catalog.getByLabel('Input price per million', { exact: true }).fill('1');
    await catalog.getByLabel('Output price per million', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Add model' }).click();
    await page.getByRole('cell', { name: 'gpt-mini', exact: true }).waitFor();

    await c.go('Members & assignments');
    await c.openCreate('Assign model');
    await page.getByLabel('Model ID', { exact: true }).selectOption({ label: 'gpt-mini (openai)' });
    await page.getByRole('button', { name: 'Assign model' }).click();
    await page.getByRole('button', { name: /^Unassign gpt-mini/ }).waitFor();
    await c.openCreate('Add member');
    await page.getByLabel('User ID', { exact: true }).fill('u-web');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('cell', { name: 'u-web', exact: true }).waitFor();
    await c.axe('03-members-assignments');

    await c.go('Connections');
    await c.openCreate('Create connection');
    const conn = page.locator('#form-CreateProviderConnection');
    await conn.getByLabel('Name', { exact: true }).fill('mock-openai');
    await conn.getByLabel('Provider', { exact: true }).fill('openai');
    await conn.getByLabel('Base URL', { exact: true }).fill(`${oa.url}/v1`);
    await conn.getByLabel('API key', { exact: true }).fill(UPSTREAM_SECRET);
    expect(await conn.getByLabel('API key', { exact: true }).getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('cell', { name: 'stored (write-only)' }).waitFor();
    expect(await page.content()).not.toContain(UPSTREAM_SECRET);
    // The edit form never holds the secret: it starts empty (empty leaves it unchanged).
    await page.getByRole('button', { name: 'Edit mock-openai' }).click();
    expect(await page.locator('#edit-UpdateProviderConnection').getByLabel('API key', { exact: true }).inputValue()).toBe('');
    expect(await page.locator('#edit-UpdateProviderConnection').getByLabel('Base URL', { exact: true }).inputValue()).toBe(`${oa.url}/v1`);
    await c.axe('04-connections');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await c.go('Routes');
    await c.openCreate('Create route');
    const route = page.locator('#form-CreateRoute');
    await route.locator('#form-CreateRoute-model').fill('gpt-mini');
    const first = route.getByRole('group', { name: 'Targets 1' });
    await first.getByLabel('Connection', { exact: true }).selectOption('mock-openai');
    await first.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
    await route.getByRole('button', { name: 'Add target' }).click();
    const second = route.getByRole('group', { name: 'Targets 2' });
    await second.getByLabel('Connection', { exact: true }).selectOption('mock-openai');
    await second.getByLabel('Model', { exact: true }).fill('gpt-4o');
    await second.getByLabel('Priority', { exact: true }).fill('1');
    await c.watchStages();
    await page.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('cell', { name: 'gpt-mini', exact: true }).waitFor();
    await expect(page.getByRole('list', { name: 'fallback chain' }).first().textContent()).resolves.toContain('fallback 1');
    await c.waitSeen(['CreateRoute gpt-mini', 'local: serving']).catch(async (e: unknown) => {
      console.log(
        `stages seen for the route creation: ${JSON.stringify(await c.stagesSeen())}; shown: ${JSON.stringify(await c.shownNow())}`,
        JSON.stringify(await tg.must(admin('GetConfigStatus'), {})),
      );
      throw e;
    });
    await c.axe('05-routes');
    // Offline: the page, its script and styles and every API call came from the management listener.
    const loaded = await page.evaluate<string[]>('performance.getEntriesByType("resource").map((e) => e.name)');
    expect(loaded.some((u) => u.includes('/console/console.js'))).toBe(true);
    expect(loaded.some((u) => u.includes('/admin.v1.AdminService/'))).toBe(true);
    expect(loaded.filter((u) => !u.startsWith(tg.adminUrl))).toEqual([]);
  },
  180_000,
);

test.skipIf(!run)(
  'a route edit: the weights drawn as they are typed, the change watched from saved to serving',
  async () => {
    await page.getByRole('button', { name: 'Edit gpt-mini' }).click();
    const edit = page.locator('#edit-UpdateRoute');
    const second = edit.getByRole('group', { name: 'Targets 2' });
    expect(await second.getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o');
    await second.getByLabel('Priority', { exact: true }).fill('0');
    await second.getByLabel('Weight', { exact: true }).fill('1');
    await edit.getByRole('group', { name: 'Targets 1' }).getByLabel('Weight', { exact: true }).fill('3');
    await expect(edit.getByRole('img', { name: 'weight 3, 75%' }).count()).resolves.toBe(1);
    await expect(edit.getByRole('img', { name: 'weight 1, 25%' }).count()).resolves.toBe(1);
    await c.axe('06-route-edit');
    await c.watchStages();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await c.waitSeen(['UpdateRoute gpt-mini', 'local: serving']).catch(async (e: unknown) => {
      console.log(
        `stages seen for the route change: ${JSON.stringify(await c.stagesSeen())}; shown: ${JSON.stringify(await c.shownNow())}`,
        JSON.stringify(await tg.must(admin('GetConfigStatus'), {})),
      );
      throw e;
    });
    const seen = await c.stagesSeen();
    // Shown at once as saved (before any data plane has it), then where it is, ending serving.
    expect(seen[0]).toContain('Saved: UpdateRoute gpt-mini.');
    expect(seen[0]).toMatch(/\.\s*saved$/);
    expect(seen.at(-1)).toContain('local: serving');
    expect(seen.findIndex((s) => s.includes('local: serving'))).toBeGreaterThan(0);
    // The table shows the saved chain: one priority, the weights' shares.
    const chain = page.getByRole('region', { name: 'Routes table' }).getByRole('list', { name: 'fallback chain' });
    await expect(chain.textContent()).resolves.not.toContain('fallback 1');
    await expect(chain.getByRole('img', { name: 'weight 3, 75%' }).count()).resolves.toBe(1);
    // Target health: each target of the route with its breaker, closed before any request.
    await c.go('Target health');
    const health = page.getByRole('region', { name: 'Target health table' });
    await health.getByRole('cell', { name: 'gpt-4o', exact: true }).waitFor();
    await expect(health.getByRole('cell', { name: 'CLOSED', exact: true }).count()).resolves.toBe(2);
    await c.axe('07-target-health');
    // And the status page lists the change with its stage per plane.
    await c.go('Status');
    await page.getByRole('region', { name: 'Changes table' }).getByRole('cell', { name: 'UpdateRoute gpt-mini' }).waitFor();
    await c.axe('07-status-changes');
    console.log(`stages seen for the route change: ${JSON.stringify(seen)}`);
  },
  150_000,
);

test.skipIf(!run)(
  'settings, a field error next to its field, a key that serves inference, its record and usage, then revoked',
  async () => {
    await c.go('Settings');
    const rate = page.locator('#form-setting-rate-limit');
    await rate.getByLabel('Requests per minute', { exact: true }).fill('1000');
    await rate.getByLabel('Per', { exact: true }).selectOption('project');
    await page.getByRole('button', { name: 'Save rate limit' }).click();
    await page.getByText(/^Set \(rate-limit/).waitFor();
    expect(await page.locator('#form-setting-rate-limit').getByLabel('Requests per minute', { exact: true }).inputValue()).toBe('1000');
    const retention = page.locator('#form-setting-record-retention');
    await retention.getByLabel('Bodies', { exact: true }).selectOption('full');
    await retention.getByLabel('Days', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Save record retention' }).click();
    // "Set (…)" once the API answered (a substring match would also take "Not set (…)" shown before).
    await page.getByText(/^Set \(record-retention/).waitFor();
    const settings = (await tg.must(admin('GetProjectSettings'), { customerId: 'acme', projectId: 'web' })) as {
      settings: { settingName: string; settingValue: string }[];
    };
    expect(Object.fromEntries(settings.settings.map((s) => [s.settingName, JSON.parse(s.settingValue)]))).toEqual({
      'rate-limit': { requestsPerMinute: 1000, per: 'project' },
      'record-retention': { bodies: 'full', days: 30 },
    });
    await c.axe('08-settings');

    await c.go('Budgets');
    await c.openCreate('Save budget');
    await page.getByLabel('Name', { exact: true }).fill('monthly');
    await page.getByLabel('Limit USD', { exact: true }).fill('lots');
    await page.getByLabel('Period', { exact: true }).selectOption('month');
    await page.getByRole('button', { name: 'Save budget' }).click();
    const limit = page.getByLabel('Limit USD', { exact: true });
    await page.locator('#form-UpsertBudget-limitUsd-error').waitFor();
    expect(await page.locator('#form-UpsertBudget-limitUsd-error').textContent()).toContain("invalid field 'limitUsd'");
    expect(await limit.getAttribute('aria-invalid')).toBe('true');
    await c.axe('09-budget-field-error');

    await c.go('API keys');
    await c.openCreate('Create API key');
    await page.getByLabel('Name', { exact: true }).fill('console-key');
    await page.getByRole('button', { name: 'Create API key' }).click();
    key = await page.locator('#new-api-key').inputValue();
    expect(key).toMatch(/^sk-/);
    await page.getByRole('cell', { name: 'console-key', exact: true }).waitFor();
    await c.axe('10-api-key-shown-once');
    await tg.settle();
    const inference = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-client-request-id': 'console-client-1' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi from the console' }] }),
    });
    expect(inference.status).toBe(200);
    expect(((await inference.json()) as { choices: unknown[] }).choices.length).toBe(1);
    requestId = inference.headers.get('x-request-id') ?? '';
    expect(requestId).not.toBe('');
    // Shown once: after a reload the key is gone from the page; only its prefix is listed.
    await page.reload();
    await page.getByRole('cell', { name: 'console-key', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);

    // The record, found by the client's request id and by the gateway's, with its bodies.
    await c.go('Records');
    const search = page.locator('#form-SearchRequestRecords');
    await search.getByLabel('Client request ID', { exact: true }).fill('console-client-1');
    await page.getByRole('button', { name: 'Search records' }).click();
    await page.getByRole('cell', { name: requestId, exact: true }).waitFor({ timeout: 45_000 });
    await page.getByRole('button', { name: `Show bodies of ${requestId}` }).click();
    await page.getByText('hi from the console').first().waitFor();
    await c.axe('11-records');
    await search.getByLabel('Client request ID', { exact: true }).fill('');
    await search.getByLabel('Request ID', { exact: true }).fill(requestId);
    await page.getByRole('button', { name: 'Search records' }).click();
    await page.getByText('1 records').waitFor();
    await search.getByLabel('Request ID', { exact: true }).fill('no-such-request');
    await page.getByRole('button', { name: 'Search records' }).click();
    await page.getByText('No matching records.').waitFor();

    // Usage: by key (named), by model, by day.
    await c.go('Usage');
    await page.getByText(/^Total: 1 requests/).waitFor();
    const byKey = await page.getByRole('img', { name: /by API key/ }).getAttribute('aria-labelledby');
    expect(byKey).toBe('chart-keys-t chart-keys-d');
    expect(await page.locator('#chart-keys-d').textContent()).toMatch(/^console-key \(sk-[^)]*\): \$0\.\d+$/);
    expect(await page.locator('#chart-models-d').textContent()).toMatch(/^gpt-mini: \$0\.\d+$/);
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.locator('#chart-days-d').textContent()).toContain(`${today}: $0.`);
    await page.getByLabel('Measure', { exact: true }).selectOption('requests');
    await expect(page.locator('#chart-models-d').textContent()).resolves.toBe('gpt-mini: 1');
    await c.axe('12-usage');

    // Revoked in the console: the key stops working.
    await c.go('API keys');
    await page.getByRole('button', { name: 'Revoke console-key' }).click();
    await page.getByRole('button', { name: 'Revoke console-key' }).waitFor({ state: 'detached' });
    await tg.settle();
    const after = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'again' }] }),
    });
    expect(after.status).toBe(401);
  },
  90_000,
);

test.skipIf(!run)(
  'data planes and project gateways with their stages; MCP servers, assignments and profiles',
  async () => {
    await c.go('Status');
    await c.openCreate('Create data plane');
    const dp = page.locator('#form-CreateDataplane');
    await dp.getByLabel('Dataplane ID', { exact: true }).fill('edge');
    await dp.getByLabel('Name', { exact: true }).fill('Edge plane');
    await page.getByRole('button', { name: 'Create data plane' }).click();
    const planes = page.getByRole('region', { name: 'Data planes table' }).last();
    await planes.getByRole('cell', { name: 'edge', exact: true }).waitFor();
    // Never polled by a data plane: its newest change is recorded, not pending or serving.
    await planes.locator('tr', { hasText: 'Edge plane' }).locator('.stage-recorded').waitFor({ timeout: 30_000 });
    await c.openCreate('Create project gateway');
    const pg = page.locator('#form-CreateProjectGateway');
    await pg.getByLabel('Workspace ID', { exact: true }).fill('edge');
    await pg.getByLabel('Project gateway ID', { exact: true }).fill('web-gw');
    await page.getByRole('button', { name: 'Create project gateway' }).click();
    const gws = page.getByRole('region', { name: 'Project gateways table' });
    await gws.getByRole('cell', { name: 'web-gw', exact: true }).waitFor();
    await gws.locator('.stage-recorded').waitFor();
    await page.getByRole('button', { name: 'Edit web-gw' }).click();
    await page.locator('#edit-UpdateProjectGateway').getByLabel('Name', { exact: true }).fill('Web gateway');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await gws.getByRole('cell', { name: 'Web gateway', exact: true }).waitFor();
    await c.axe('13-data-planes');

    await c.go('MCP');
    await c.openCreate('Add MCP server');
    const srv = page.locator('#form-CreateMcpServer');
    await srv.getByLabel('Server ID', { exact: true }).fill('docs');
    await srv.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/mcp');
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await page.getByRole('cell', { name: 'docs', exact: true }).waitFor();
    await c.go('Members & assignments');
    await c.openCreate('Assign MCP server');
    // The catalog's servers are offered once read (a text field until then).
    await page.locator('#form-AddProjectMcpServer select[name="serverId"] option[value="docs"]').waitFor({ state: 'attached' });
    await page.locator('#form-AddProjectMcpServer').getByLabel('Server ID', { exact: true }).selectOption('docs');
    await page.getByRole('button', { name: 'Assign MCP server' }).click();
    await page.getByRole('button', { name: 'Unassign docs' }).waitFor();
    await c.openCreate('Assign provider');
    await page.locator('#form-AddProjectProvider').getByLabel('Provider name', { exact: true }).fill('anthropic');
    await page.getByRole('button', { name: 'Assign provider' }).click();
    await page.getByRole('button', { name: 'Unassign anthropic' }).waitFor();
    await c.go('MCP');
    await c.openCreate('Create MCP profile');
    const prof = page.locator('#form-CreateMcpProfile');
    await prof.getByLabel('Profile ID', { exact: true }).fill('helpdesk');
    await prof.getByRole('group', { name: 'Servers 1' }).getByLabel('Server ID', { exact: true }).selectOption('docs');
    await prof.getByRole('group', { name: 'Servers 1' }).getByLabel('Tools', { exact: true }).fill('search\nfetch_*');
    await page.getByRole('button', { name: 'Create MCP profile' }).click();
    await page.getByRole('cell', { name: 'docs [search, fetch_*] as docs' }).waitFor();
    await page.getByRole('button', { name: 'Edit helpdesk' }).click();
    const editProf = page.locator('#edit-UpdateMcpProfile');
    expect(await editProf.getByRole('group', { name: 'Servers 1' }).getByLabel('Tools', { exact: true }).inputValue()).toBe(
      'search\nfetch_*',
    );
    await editProf.getByLabel('Description', { exact: true }).fill('support tools');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('cell', { name: 'support tools', exact: true }).waitFor();
    await c.axe('14-mcp');

    // An A2A agent: its card served here, pinned on create; then assigned to the project.
    const card = {
      name: 'Helpdesk agent',
      supportedInterfaces: [{ url: 'http://127.0.0.1:9/rpc', protocolBinding: 'JSONRPC' }],
      skills: [{ id: 'triage', name: 'Triage' }],
    };
    const cards = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json(card) });
    try {
      await c.go('A2A agents');
      await c.openCreate('Add A2A agent');
      const agent = page.locator('#form-CreateA2aAgent');
      await agent.getByLabel('Agent ID', { exact: true }).fill('helpdesk');
      await agent.getByLabel('Card URL', { exact: true }).fill(`http://127.0.0.1:${cards.port}/.well-known/agent-card.json`);
      await page.getByRole('button', { name: 'Add A2A agent' }).click();
      await page.getByRole('cell', { name: 'Helpdesk agent', exact: true }).waitFor();
      await page.getByRole('cell', { name: 'ACTIVE', exact: true }).waitFor();
      await page.getByRole('cell', { name: 'Triage', exact: true }).waitFor();
      // The assignment form's choices are read when the page opens.
      await c.go('MCP');
      await c.go('A2A agents');
      await c.openCreate('Assign A2A agent');
      // ListA2aAgents checks each card as it lists: the choices arrive a moment later.
      await page.locator('#form-AddProjectA2aAgent option[value="helpdesk"]').waitFor({ state: 'attached' });
      await page.locator('#form-AddProjectA2aAgent').getByLabel('Agent ID', { exact: true }).selectOption('helpdesk');
      await page.getByRole('button', { name: 'Assign A2A agent' }).click();
      await page.getByRole('button', { name: 'Unassign helpdesk' }).waitFor();
      await c.axe('15-a2a');
    } finally {
      cards.stop(true);
    }
  },
  60_000,
);

test.skipIf(!run)(
  "an audit entry's inclusion proof is verified in the browser",
  async () => {
    await c.go('Audit log');
    await page.locator('#form-QueryAuditLogs').getByLabel('Resource type', { exact: true }).fill('route');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('cell', { name: 'route', exact: true }).first().waitFor();
    await page
      .getByRole('button', { name: /^Show details of / })
      .first()
      .click();
    // Windows are sealed every second: ask again until the entry's window is.
    const deadline = Date.now() + 20_000;
    for (;;) {
      await page.getByRole('button', { name: 'Verify inclusion proof' }).click();
      await page.locator('.verdict').waitFor();
      const verdict = (await page.locator('.verdict').textContent()) ?? '';
      if (!verdict.includes('not in a sealed checkpoint yet') || Date.now() > deadline) break;
      await Bun.sleep(700);
    }
    await page.locator('.verdict.ok').waitFor();
    const checks = await page.locator('.verdict li').allTextContents();
    expect(checks.map((t) => t.split(':')[0])).toEqual(['✓ leaf hash', '✓ audit path', '✓ window unchanged', '✓ checkpoint signature']);
    await c.axe('15-audit-verified');
  },
  60_000,
);

test.skipIf(!run)(
  'every page passes axe-core and fits 1280×800 and a phone',
  async () => {
    const titles = await c.axeEveryPage('20-admin');
    expect(titles.length).toBe(24);
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      // Status last: the reload below lands on it.
      for (const title of ['Routes', 'Usage', 'Playground', 'BYOK keys', 'Files & batches', 'Telemetry', 'Service accounts', 'Status']) {
        await c.go(title);
        await c.loaded();
        // Nothing wider than the screen but the scrollable tables and the preformatted bodies.
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow).toBeLessThanOrEqual(0);
        await shot(page, `30-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${size.width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // Keyboard: the skip link is the first stop on a fresh page.
    await page.reload();
    await page.getByRole('heading', { name: 'Configuration status' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to content');
  },
  120_000,
);

test.skipIf(!run)(
  'a user token sees only its project; another project is refused; sign out forgets the token',
  async () => {
    await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'secret-proj' });
    await tg.must(admin('CreateProviderConnection'), {
      customerId: 'acme',
      projectId: 'secret-proj',
      name: 'hidden-conn',
      provider: 'openai',
      apiKey: 'x',
    });
    const token = (await tg.must(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'edge',
      userId: 'u-web',
      organizationUnit: 'eng',
      role: 'developer',
      projectId: 'web',
    })) as { accessToken: string };

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor();
    expect(await page.evaluate<unknown>('sessionStorage.length')).toBe(0);
    await c.signIn(token.accessToken);
    await page.getByText('User u-web').waitFor();
    expect(await c.nav().getByRole('link', { name: 'Customers', exact: true }).count()).toBe(0);
    expect(await c.nav().getByRole('link', { name: 'Audit log', exact: true }).count()).toBe(0);
    await c.go('Projects');
    await page.getByRole('cell', { name: 'web', exact: true }).waitFor();
    const options = await page.getByLabel('Project', { exact: true }).locator('option').allTextContents();
    expect(options).toEqual(['web']);
    expect(await page.content()).not.toContain('secret-proj');
    await c.go('Connections');
    await page.getByRole('cell', { name: 'mock-openai', exact: true }).waitFor();
    expect(await page.content()).not.toContain('hidden-conn');
    // A member reads but cannot write: the page offers no write, and the API refuses one.
    await c.loaded();
    expect(await page.locator('details.create').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    const refused = await fetch(`${tg.adminUrl}${admin('CreateProviderConnection')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'acme', projectId: 'web', name: 'nope', provider: 'openai', apiKey: 'x' }),
    });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(await refused.json())).toContain("CreateProviderConnection requires the admin role in project 'web'");
    await c.axe('40-user-token-connections');
    // Records and usage of its own project only.
    await c.go('Usage');
    await page.getByText(/^Total: 1 requests/).waitFor();
    // A link to the other project: the API refuses it, and nothing of it is shown.
    await page.goto(`${tg.adminUrl}/console/#/connections/acme/secret-proj`);
    await page.getByRole('heading', { name: 'Provider connections' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: 'Customer "acme" has no project "secret-proj" this token can see (from the link): showing "web".' })
      .waitFor();
    await page.getByRole('cell', { name: 'mock-openai', exact: true }).waitFor();
    expect(await page.content()).not.toContain('hidden-conn');
    expect(await page.getByLabel('Project', { exact: true }).inputValue()).toBe('web');
    const direct = await fetch(`${tg.adminUrl}${admin('ListProviderConnections')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'acme', projectId: 'secret-proj' }),
    });
    expect(direct.status).toBe(403);
    const titles = await c.axeEveryPage('41-member');
    expect(titles).not.toContain('Audit log');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor();
    expect(await page.evaluate<unknown>('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('Token').waitFor();
    await shot(page, '50-signed-out');

    expect(c.findings).toEqual(Object.fromEntries(Object.keys(c.findings).map((k) => [k, []])));
  },
  120_000,
);
