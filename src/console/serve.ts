import { Elysia } from 'elysia';

/**
 * The web console on the management listener (contract §10): `/console/` serves a page whose script
 * and styles are bundled into the gateway (assets.ts) — no CDN, nothing fetched from elsewhere.
 * The bundle is loaded on the first request for it and kept. The page holds no data: everything it
 * shows comes from the management API, called with the token the user signs in with.
 */

type Assets = { js: string; css: string };
let assets: Promise<Assets> | undefined;
const load = (): Promise<Assets> => (assets ??= import('./assets.ts').then((m) => m.ASSETS));

/**
 * Scripts and styles only from this origin; TypeBox's compiled checks (the typed client checks each
 * answer against its schema) need 'unsafe-eval'. No frames, no plugins, no other origins.
 */
const CSP =
  "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>AI gateway console</title>
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/console.js"></script>
</head>
<body><div id="app"></div><noscript>The console needs JavaScript.</noscript></body>
</html>
`;

const headers = (type: string) => ({
  'content-type': type,
  'cache-control': 'no-cache',
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

export const consoleRoutes = () =>
  new Elysia({ name: 'console' })
    // `/console` and `/console/` alike (Elysia matches either); the page's assets are absolute paths.
    .get('/console/', () => new Response(PAGE, { headers: headers('text/html; charset=utf-8') }), { detail: { hide: true } })
    .get('/console/console.js', async () => new Response((await load()).js, { headers: headers('text/javascript; charset=utf-8') }), {
      detail: { hide: true },
    })
    .get('/console/console.css', async () => new Response((await load()).css, { headers: headers('text/css; charset=utf-8') }), {
      detail: { hide: true },
    });
