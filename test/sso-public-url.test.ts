import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../src/config/env.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startIdp, type TestIdp } from './support/oidc-idp.ts';

/**
 * The console's sign-in behind a reverse proxy (contract §16, GATEWAY_PUBLIC_URL): the proxy
 * terminates TLS at `https://console.example.test` and forwards to the management listener on
 * 127.0.0.1 with its own Host header. The identity provider (a real oidc-provider) knows only the
 * public redirect URI, so the authorization request and the code exchange must both name it — built
 * on the request's own URL they would name `http://gateway.internal:8081/…` and be refused. The
 * provider's login and consent pages are driven over plain HTTP (no browser): the forms it serves
 * are posted back as a browser would.
 */

const PUBLIC = 'https://console.example.test';
const INTERNAL_HOST = 'gateway.internal:8081';
const ALICE = 'alice@example.com';
let idp: TestIdp;
let tg: TestGateway;

beforeAll(async () => {
  idp = await startIdp();
  tg = await startTestGateway({
    GATEWAY_OIDC_ISSUER: idp.issuer,
    GATEWAY_OIDC_CLIENT_ID: idp.clientId,
    GATEWAY_OIDC_CLIENT_SECRET: idp.clientSecret,
    GATEWAY_PUBLIC_URL: `${PUBLIC}/`,
  });
  idp.setRedirectUri(`${PUBLIC}/console/sso/callback`);
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'web', userId: ALICE, role: 'admin' });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  await idp?.close();
});

/** A request as the proxy forwards it: to the listener's address, with the Host it was configured with. */
const viaProxy = (path: string, cookie = '') =>
  fetch(`${tg.adminUrl}${path}`, { redirect: 'manual', headers: { host: INTERNAL_HOST, ...(cookie ? { cookie } : {}) } });

const cookiePair = (res: Response, name: string): string =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith(`${name}=`)) ?? '';

/** The user at the provider: follows its redirects with its cookies, signs in as `login`, consents; answers where it sends the browser back. */
const atProvider = async (authorizationUrl: string, login: string): Promise<URL> => {
  const jar = new Map<string, string>();
  let next: { url: string; init: RequestInit } = { url: authorizationUrl, init: {} };
  for (let step = 0; step < 12; step++) {
    const headers = new Headers(next.init.headers);
    headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(next.url, { ...next.init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      const to = new URL(location, next.url);
      if (to.origin !== new URL(idp.issuer).origin) return to;
      next = { url: to.href, init: {} };
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action) throw new Error(`the provider answered ${res.status}: ${html.slice(0, 300)}`);
    const form = new URLSearchParams(html.includes('name="login"') ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' });
    next = {
      url: new URL(action, next.url).href,
      init: { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    };
  }
  throw new Error('the provider never sent the browser back');
};

test('behind a proxy: the authorization request and the code exchange use GATEWAY_PUBLIC_URL, not the forwarded Host', async () => {
  const login = await viaProxy('/console/sso/login');
  expect(login.status).toBe(302);
  const authorization = new URL(login.headers.get('location') ?? '');
  expect(authorization.origin).toBe(new URL(idp.issuer).origin);
  expect(authorization.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/console/sso/callback`);
  // The public origin is https: the flow cookie is Secure although the hop to the listener is plain HTTP.
  const flowCookie = login.headers.getSetCookie().find((c) => c.startsWith('gateway_sso=')) ?? '';
  expect(flowCookie).toContain('; Secure');

  const back = await atProvider(authorization.href, ALICE);
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC}/console/sso/callback`);
  expect(back.searchParams.get('code')).toBeTruthy();

  // The browser comes back through the proxy: the code is redeemed with the public redirect URI.
  const done = await viaProxy(`/console/sso/callback${back.search}`, cookiePair(login, 'gateway_sso'));
  expect(done.status).toBe(303);
  const location = done.headers.get('location') ?? '';
  expect(location).toStartWith('/console/#sso=');
  const token = decodeURIComponent(location.slice('/console/#sso='.length));
  const projects = await tg.call(admin('ListProjects'), { customerId: 'acme' }, token);
  expect(projects.status).toBe(200);
  expect(JSON.stringify(projects.body)).toContain('"web"');
});

test("SCIM's Location and meta.location name the public URL too", async () => {
  const t = String((await tg.must(admin('CreateScimToken'), { customerId: 'acme' })).token);
  const res = await fetch(`${tg.adminUrl}/scim/v2/Users`, {
    method: 'POST',
    headers: { host: INTERNAL_HOST, authorization: `Bearer ${t}`, 'content-type': 'application/scim+json' },
    body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'bo@example.com' }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; meta: { location: string } };
  expect(res.headers.get('location')).toBe(`${PUBLIC}/scim/v2/Users/${body.id}`);
  expect(body.meta.location).toBe(`${PUBLIC}/scim/v2/Users/${body.id}`);
});

test('GATEWAY_PUBLIC_URL is an origin: a path, a query or credentials stop start-up naming it', () => {
  for (const bad of ['https://gw.example.com/console', 'https://gw.example.com/?a=1', 'https://u:p@gw.example.com', 'ftp://gw.example.com'])
    expect(() => loadConfig([], { GATEWAY_PUBLIC_URL: bad })).toThrow(ConfigError);
  expect(loadConfig([], { GATEWAY_PUBLIC_URL: 'https://gw.example.com:443/' }).publicUrl).toBe('https://gw.example.com');
});
