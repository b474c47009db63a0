import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { type AxeFinding, hasChromium, launchBrowser, seriousAxeFindings, shot, type TestBrowser } from './support/browser.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';

/**
 * The web console (contract §10) in Debian's Chromium against a real gateway: everything below is
 * done through the page, by accessible names, except the user token (issued by the admin API).
 */

const run = hasChromium();
if (!run) console.warn('console.test.ts: /usr/bin/chromium is absent (apt-get install -y chromium): the browser tests are SKIPPED');

let tg: TestGateway;
let oa: MockUpstream;
let tb: TestBrowser;
let page: Page;
const findings: Record<string, AxeFinding[]> = {};
const UPSTREAM_SECRET = 'sk-upstream-console-secret-42';

const axe = async (name: string) => {
  findings[name] = await seriousAxeFindings(page);
  await shot(page, name);
};

const go = async (title: string) => {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: title, exact: true }).click();
  await page.getByRole('heading', { level: 2 }).first().waitFor();
};

const openCreate = async (summary: string) => {
  const details = page.locator('details.create', { has: page.locator('summary', { hasText: summary }) });
  if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
  return details;
};

beforeAll(async () => {
  if (!run) return;
  oa = startMockUpstream('openai');
  tg = await startTestGateway();
  tb = await launchBrowser();
  page = await tb.context.newPage();
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
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(tg.adminUrl)) external.push(r.url());
    });
    await page.goto(`${tg.adminUrl}/console/`);
    await axe('01-sign-in');
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#token-error').waitFor();
    expect(await page.locator('#token-error').textContent()).toBe('invalid credentials');
    expect(await page.getByLabel('Token').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Configuration status' }).waitFor();

    await go('Customers');
    await openCreate('Create customer');
    await page.getByLabel('Customer ID', { exact: true }).fill('acme', { timeout: 5000 });
    await page.getByLabel('Name', { exact: true }).fill('Acme Inc');
    await page.getByRole('button', { name: 'Create customer' }).click();
    await page.getByRole('cell', { name: 'acme', exact: true }).waitFor();
    await axe('02-customers');

    await go('Projects');
    await page.getByLabel('Customer', { exact: true }).selectOption('acme');
    await openCreate('Create project');
    await page.getByLabel('Project ID', { exact: true }).fill('web');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('cell', { name: 'web', exact: true }).waitFor();
    await page.getByLabel('Project', { exact: true }).selectOption('web');

    await go('Catalog');
    await openCreate('Add model');
    const catalog = page.locator('#form-CreateModel');
    await catalog.getByLabel('Model', { exact: true }).fill('gpt-mini');
    await catalog.getByLabel('Provider', { exact: true }).fill('openai');
    await catalog.getByLabel('Mode', { exact: true }).fill('chat');
    await catalog.getByLabel('Input price per million', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Add model' }).click();
    await page.getByRole('cell', { name: 'gpt-mini', exact: true }).waitFor();

    await go('Members & models');
    await openCreate('Assign model');
    await page.getByLabel('Model ID', { exact: true }).selectOption({ label: 'gpt-mini (openai)' });
    await page.getByRole('button', { name: 'Assign model' }).click();
    await page.getByRole('button', { name: /^Unassign/ }).waitFor();
    await openCreate('Add member');
    await page.getByLabel('User ID', { exact: true }).fill('u-web');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('cell', { name: 'u-web', exact: true }).waitFor();
    await axe('03-members-models');

    await go('Connections');
    await openCreate('Create connection');
    const conn = page.locator('#form-CreateProviderConnection');
    await conn.getByLabel('Name', { exact: true }).fill('mock-openai');
    await conn.getByLabel('Provider', { exact: true }).fill('openai');
    await conn.getByLabel('Base URL', { exact: true }).fill(`${oa.url}/v1`);
    await conn.getByLabel('API key', { exact: true }).fill(UPSTREAM_SECRET);
    expect(await conn.getByLabel('API key', { exact: true }).getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('cell', { name: 'stored (write-only)' }).waitFor();
    expect(await page.content()).not.toContain(UPSTREAM_SECRET);
    await axe('04-connections');

    await go('Routes');
    await openCreate('Create route');
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
    await page.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('cell', { name: 'gpt-mini', exact: true }).waitFor();
    await expect(page.getByRole('list', { name: 'fallback chain' }).first().textContent()).resolves.toContain('fallback 1');
    // The saved change, then its stage on the embedded data plane, live.
    await page.locator('.stage .stage-serving').waitFor({ timeout: 20_000 });
    await axe('05-routes');

    await go('Budgets');
    await openCreate('Save budget');
    await page.getByLabel('Name', { exact: true }).fill('monthly');
    await page.getByLabel('Limit USD', { exact: true }).fill('lots');
    await page.getByLabel('Period', { exact: true }).selectOption('month');
    await page.getByRole('button', { name: 'Save budget' }).click();
    const limit = page.getByLabel('Limit USD', { exact: true });
    await page.locator('#form-UpsertBudget-limitUsd-error').waitFor();
    expect(await page.locator('#form-UpsertBudget-limitUsd-error').textContent()).toContain("invalid field 'limitUsd'");
    expect(await limit.getAttribute('aria-invalid')).toBe('true');
    await axe('06-budget-field-error');

    await go('API keys');
    await openCreate('Create API key');
    await page.getByLabel('Name', { exact: true }).fill('console-key');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = await page.locator('#new-api-key').inputValue();
    expect(key).toMatch(/^sk-/);
    await page.getByRole('cell', { name: 'console-key', exact: true }).waitFor();
    await axe('07-api-key-shown-once');
    await tg.settle();
    const inference = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi from the console' }] }),
    });
    expect(inference.status).toBe(200);
    expect(((await inference.json()) as { choices: unknown[] }).choices.length).toBe(1);
    // Shown once: after a reload the key is gone from the page; only its prefix is listed.
    await page.reload();
    await page.getByRole('cell', { name: 'console-key', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);

    await go('Audit log');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: 'api_key', exact: true }).first().waitFor();
    await axe('08-audit');
    await go('Status');
    await page.locator('.stage-serving').first().waitFor();
    await axe('09-status');

    await page.setViewportSize({ width: 390, height: 844 });
    await go('Routes');
    await shot(page, '10-routes-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(external).toEqual([]);
  },
  120_000,
);

test.skipIf(!run)('a user token sees only its project; sign out forgets the token', async () => {
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'secret-proj' });
  await tg.must(admin('CreateProviderConnection'), { customerId: 'acme', projectId: 'secret-proj', name: 'hidden-conn', provider: 'openai', apiKey: 'x' });
  const token = (await tg.must(admin('CreateUserToken'), { customerId: 'acme', workspaceId: 'edge', userId: 'u-web', organizationUnit: 'eng', role: 'developer', projectId: 'web' })) as { accessToken: string };

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Token').waitFor();
  expect(await page.evaluate<unknown>('sessionStorage.length')).toBe(0);
  await page.getByLabel('Token').fill(token.accessToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('User u-web').waitFor();
  const nav = page.getByRole('navigation', { name: 'Console pages' });
  expect(await nav.getByRole('link', { name: 'Customers', exact: true }).count()).toBe(0);
  expect(await nav.getByRole('link', { name: 'Audit log', exact: true }).count()).toBe(0);
  await go('Projects');
  await page.getByRole('cell', { name: 'web', exact: true }).waitFor();
  const options = await page.getByLabel('Project', { exact: true }).locator('option').allTextContents();
  expect(options).toEqual(['web']);
  expect(await page.content()).not.toContain('secret-proj');
  await go('Connections');
  await page.getByRole('cell', { name: 'mock-openai', exact: true }).waitFor();
  expect(await page.content()).not.toContain('hidden-conn');
  // A member reads but cannot write: the API's refusal is shown.
  await openCreate('Create connection');
  const conn = page.locator('#form-CreateProviderConnection');
  await conn.getByLabel('Name', { exact: true }).fill('nope');
  await conn.getByLabel('Provider', { exact: true }).fill('openai');
  await page.getByRole('button', { name: 'Create connection' }).click();
  await conn.locator('.form-error').waitFor();
  expect(await conn.locator('.form-error').textContent()).toBe("CreateProviderConnection requires the admin role in project 'web'");
  await axe('11-user-token-connections');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Token').waitFor();
  expect(await page.evaluate<unknown>('sessionStorage.length')).toBe(0);
  await page.reload();
  await page.getByLabel('Token').waitFor();
  await shot(page, '12-signed-out');

  expect(findings).toEqual(Object.fromEntries(Object.keys(findings).map((k) => [k, []])));
}, 60_000);
