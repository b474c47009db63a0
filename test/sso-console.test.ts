import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { hasChromium, launchBrowser, seriousAxeFindings, shot, type TestBrowser } from './support/browser.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startIdp, type TestIdp } from './support/oidc-idp.ts';

/**
 * The console's "Sign in with SSO" (contract §16) in Chromium, against a real OpenID Provider
 * (oidc-provider) started here: the authorization code flow with PKCE, state and nonce, through
 * the provider's own login and consent pages, back to the console holding a gateway user token.
 * Screenshots: test-artifacts/console/sso-*.png.
 */

const run = hasChromium();
if (!run) console.warn('sso-console.test.ts: /usr/bin/chromium is absent: the browser tests are SKIPPED');

let idp: TestIdp;
let tg: TestGateway;
let tb: TestBrowser;
let page: Page;
const ALICE = 'alice@example.com';

beforeAll(async () => {
  if (!run) return;
  idp = await startIdp();
  tg = await startTestGateway({
    GATEWAY_OIDC_ISSUER: idp.issuer,
    GATEWAY_OIDC_CLIENT_ID: idp.clientId,
    GATEWAY_OIDC_CLIENT_SECRET: idp.clientSecret,
    GATEWAY_OIDC_ADMIN_GROUP: 'gateway-admins',
  });
  idp.setRedirectUri(`${tg.adminUrl}/console/sso/callback`);
  idp.accounts.set('root', { email: 'root@example.com', groups: ['gateway-admins'] });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'web', userId: ALICE, role: 'member' });
  tb = await launchBrowser();
  page = await tb.context.newPage();
  page.on('pageerror', (e) => console.log(`console page error: ${e.message}`));
}, 60_000);

afterAll(async () => {
  if (!run) return;
  await tb?.close();
  await tg?.stop();
  await idp?.close();
});

/** Through the provider's development login and consent pages. */
const signInAtIdp = async (login: string): Promise<void> => {
  // A fresh provider session each time (its cookie would sign the last user in again without a form).
  await tb.context.clearCookies();
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any-password');
  await shot(page, 'sso-02-idp-login');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
};

test.skipIf(!run)(
  'Sign in with SSO: code flow with PKCE through the provider, back in the console as the member; sign-out revokes the token',
  async () => {
    await page.goto(`${tg.adminUrl}/console/`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    const findings = await seriousAxeFindings(page);
    expect(findings).toEqual([]);
    await shot(page, 'sso-01-signin');
    // The authorization request is the code flow with PKCE S256, state and nonce, to a redirect URI under /console/.
    const authorize = page.waitForRequest((r) => r.url().startsWith(`${idp.issuer}/auth`));
    const signedIn = signInAtIdp(ALICE);
    const url = new URL((await authorize).url());
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')?.length).toBe(43);
    expect(url.searchParams.get('state')?.length).toBeGreaterThan(20);
    expect(url.searchParams.get('nonce')?.length).toBeGreaterThan(20);
    expect(url.searchParams.get('redirect_uri')).toBe(`${tg.adminUrl}/console/sso/callback`);
    await signedIn;
    await page.getByRole('heading', { name: 'Configuration status' }).waitFor();
    await page.getByText(`User ${ALICE}`).waitFor();
    // The token is out of the address bar and the history, in the tab's sessionStorage.
    expect(page.url()).not.toContain('sso=');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(1);
    await shot(page, 'sso-03-signed-in');
    const tokens = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: ALICE });
    expect(Array.isArray(tokens.tokens) ? tokens.tokens.length : 0).toBe(1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    // The session's token was revoked: signing out ended it on the gateway too.
    for (let i = 0; i < 50; i++) {
      const all = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: ALICE, includeRevoked: true });
      if (JSON.stringify(all.tokens).includes('revokedAt')) break;
      await Bun.sleep(100);
    }
    const after = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: ALICE });
    expect(Array.isArray(after.tokens) ? after.tokens.length : -1).toBe(0);
  },
  60_000,
);

test.skipIf(!run)('a member of the admin group signs in as platform admin', async () => {
  await page.goto(`${tg.adminUrl}/console/`);
  await signInAtIdp('root');
  await page.getByText('Platform admin').waitFor();
  await page.getByRole('link', { name: 'Customers', exact: true }).waitFor();
  await shot(page, 'sso-04-admin');
  await page.getByRole('button', { name: 'Sign out' }).click();
});

test.skipIf(!run)('a user who is no member anywhere is sent back with the reason', async () => {
  await page.goto(`${tg.adminUrl}/console/`);
  await signInAtIdp('stranger@example.com');
  await page.getByRole('alert').filter({ hasText: 'Single sign-on failed' }).waitFor();
  expect(await page.getByRole('alert').textContent()).toContain('not a member of any project');
  expect(page.url()).not.toContain('sso-error');
  expect(await seriousAxeFindings(page)).toEqual([]);
  await shot(page, 'sso-05-refused');
});

test.skipIf(!run)('a callback without the flow cookie (forged or replayed) is refused', async () => {
  const res = await fetch(`${tg.adminUrl}/console/sso/callback?code=abc&state=forged`, { redirect: 'manual' });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toContain('sso-error=');
  const start = await fetch(`${tg.adminUrl}/console/sso/login`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const cookie = start.headers.get('set-cookie') ?? '';
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('SameSite=Lax');
  expect(cookie).toContain('Path=/console/sso/');
  // The state in the cookie must be the one the provider sends back: another state is refused.
  const forged = await fetch(`${tg.adminUrl}/console/sso/callback?code=abc&state=forged&iss=${encodeURIComponent(idp.issuer)}`, {
    redirect: 'manual',
    headers: { cookie: cookie.split(';')[0] ?? '' },
  });
  expect(forged.status).toBe(303);
  expect(forged.headers.get('location')).toContain('sso-error=');
});

test.skipIf(!run)(
  'the SCIM tokens and User tokens pages pass axe-core at desktop and phone width; a SCIM token is shown once',
  async () => {
    const { ConsolePage } = await import('./support/console-page.ts');
    const { ADMIN_TOKEN } = await import('./support/gateway.ts');
    const c = new ConsolePage(page);
    await tb.context.clearCookies();
    await page.goto(`${tg.adminUrl}/console/`);
    await c.signIn(ADMIN_TOKEN);
    await c.go('SCIM tokens');
    await c.loaded();
    const form = await c.openCreate('Create SCIM token');
    await form.getByRole('button', { name: 'Create SCIM token' }).click();
    const shown = await page.getByLabel('SCIM token', { exact: true }).inputValue();
    expect(shown).toMatch(/^scim_/);
    // Usable at once on /scim/v2/.
    const res = await fetch(`${tg.adminUrl}/scim/v2/Users`, { headers: { authorization: `Bearer ${shown}` } });
    expect(res.status).toBe(200);
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      for (const title of ['SCIM tokens', 'User tokens']) {
        await c.go(title);
        await c.loaded();
        expect(await seriousAxeFindings(page)).toEqual([]);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow).toBeLessThanOrEqual(0);
        await shot(page, `sso-10-${title.toLowerCase().replace(/ /g, '-')}-${size.width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  },
);
