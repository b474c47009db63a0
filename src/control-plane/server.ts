import { openapi } from '@elysiajs/openapi';
import { type TlsFiles, tlsOption } from '../core/tls.ts';
import { Elysia } from 'elysia';
import { inferenceRelay } from '../console/inference-relay.ts';
import { consoleRoutes } from '../console/serve.ts';
import { callInfo, type ServerLike } from './audit-record.ts';
import type { ManagementAuth } from './auth.ts';
import { mountOperations, type OpDef } from './connect.ts';
import type { OidcIssuer } from './oidc.ts';
import { openApiPage } from './openapi-ui.ts';
import { inferencePaths } from '../api/inference-endpoints.ts';
import { ssoRoutes } from './sso-routes.ts';

export interface ControlServerOptions {
  host: string;
  port: number;
  /** GATEWAY_ADMIN_TLS_*: serve HTTPS. */
  tls?: TlsFiles;
  /** GATEWAY_ADMIN_MAX_BODY (bytes); default 4 MiB. */
  maxBodyBytes?: number;
  ops: readonly OpDef[];
  auth: ManagementAuth;
  ready: () => boolean;
  /** A trivial query (`select 1`): resolves when the database answers. Checked by `/readyz`. */
  pingDatabase?: () => Promise<unknown>;
  /** The metrics listener's state (`listening`, `off`, `failed`), reported by `/readyz` as `metrics` (it does not make the process unready). */
  metrics?: () => string;
  version: string;
  /** `GET /.well-known/jwks.json`: the audit checkpoint keys and the user-token signing keys. */
  jwks?: () => Promise<{ keys: object[] }>;
  /** GATEWAY_OIDC_*: the console's "Sign in with SSO" (sso-routes.ts). */
  oidc?: OidcIssuer;
  /** GATEWAY_PUBLIC_URL: the origin the SSO redirect URI is built on (unset: each request's own). */
  publicUrl?: string;
  /** SCIM 2.0 at /scim/v2/ (scim/routes.ts). */
  scim?: (request: Request, server?: ServerLike | null) => Promise<Response>;
  /** The inference listener of this process: the console's playground calls it through `/console/inference/` (console/inference-relay.ts). */
  inferenceUrl?: string;
  /** Raw POST routes outside the Connect operations (the data plane protocol, dataplane-protocol.ts). */
  rawRoutes?: Record<string, (request: Request) => Promise<Response>>;
}

/** How long `/readyz` waits for the database before calling it unreachable. */
const DB_PING_TIMEOUT_MS = 2_000;

/** Whether the database answers within the time-out (never throws; the driver's text is not kept). */
const databaseAnswers = async (ping: () => Promise<unknown>): Promise<boolean> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), DB_PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([ping().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
};

const TITLE = 'AI gateway management API';
const SPEC = '/openapi/json';

const DESCRIPTION = [
  'Connect-protocol unary JSON: every operation is `POST /{service}/{Operation}` with the request object as body (`Content-Type: application/json`) and the response object as a 200 body.',
  'Errors are `{code, message}` with the Connect status mapping (invalid_argument 400, failed_precondition 400, unauthenticated 401, permission_denied 403, not_found 404, already_exists 409, internal 500, …); a validation error names the offending field.',
  'Names are camelCase; snake_case is accepted on input. Unknown properties are rejected. int64 values are a number or a digit string on input and strings on output; timestamps are RFC 3339 UTC.',
  'Authentication: `Authorization: Bearer <token>` with the platform-admin token or a user token (CreateUserToken; project admins manage their project, members read it). Each operation states its required permission.',
].join('\n\n');

/** The management listener: Connect-style operations, health, the OpenAPI document and its offline UI. */
export const buildControlApp = (opts: ControlServerOptions) =>
  new Elysia({ normalize: false })
    // Every response of the management listener carries the request's id (the correlationId of its audit entry).
    .onRequest(({ request, set, server }) => {
      set.headers['x-request-id'] = callInfo(request, server).requestId;
    })
    .onError(({ code, request, server }) => {
      if (code === 'NOT_FOUND')
        return new Response(
          JSON.stringify({ code: 'not_found', message: 'unknown operation: POST /{service}/{Operation}, see /openapi' }),
          {
            status: 404,
            headers: { 'content-type': 'application/json', 'x-request-id': callInfo(request, server).requestId },
          },
        );
      return undefined;
    })
    .use(
      openapi({
        path: '/openapi',
        specPath: SPEC,
        // The bundled UI loads Scalar from a CDN; a self-contained page is served below instead.
        provider: null,
        // Operation paths contain dots (`/admin.v1.AdminService/…`): not static files.
        exclude: { staticFile: false },
        documentation: {
          info: { title: TITLE, version: opts.version, description: DESCRIPTION },
          components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
          security: [{ bearer: [] }],
          // The inference listener's endpoints, served by Bun.serve's route table (api/inference-endpoints.ts).
          paths: inferencePaths(),
        },
      }),
    )
    .get('/openapi', () => new Response(openApiPage(TITLE, SPEC), { headers: { 'content-type': 'text/html; charset=utf-8' } }), {
      detail: { hide: true },
    })
    .get(
      '/healthz',
      ({ set }) => {
        if (opts.ready()) return { status: 'ok' };
        set.status = 503;
        return { status: 'starting' };
      },
      { detail: { hide: true } },
    )
    .get(
      '/readyz',
      // Ready: a configuration is loaded and the database answers; each part says which is missing.
      async ({ set }) => {
        const database = opts.pingDatabase ? ((await databaseAnswers(opts.pingDatabase)) ? 'ok' : 'unreachable') : undefined;
        const status = !opts.ready() ? 'starting' : database === 'unreachable' ? 'unavailable' : 'ok';
        set.status = status === 'ok' ? 200 : 503;
        return { status, ...(database ? { database } : {}), ...(opts.metrics ? { metrics: opts.metrics() } : {}) };
      },
      { detail: { hide: true } },
    )
    .get(
      '/.well-known/jwks.json',
      // Public keys only, no authentication: anyone may verify checkpoints and tokens.
      async ({ set }) => {
        set.headers['cache-control'] = 'public, max-age=60';
        return opts.jwks ? await opts.jwks() : { keys: [] };
      },
      { detail: { hide: true } },
    )
    .use(consoleRoutes())
    .use(inferenceRelay(opts.inferenceUrl))
    .use(ssoRoutes(opts.oidc, opts.ops, opts.publicUrl))
    .use((app) => {
      const scim = opts.scim;
      if (scim) app.all('/scim/v2/*', ({ request, server }) => scim(request, server), { parse: 'none', detail: { hide: true } });
      return app;
    })
    .use((app) => {
      for (const [path, handle] of Object.entries(opts.rawRoutes ?? {}))
        app.post(path, ({ request }) => handle(request), { parse: 'none', detail: { hide: true } });
      return app;
    })
    .use(mountOperations(opts.ops, { authenticate: opts.auth.authenticate, authorize: opts.auth.authorize }));

/** GATEWAY_ADMIN_MAX_BODY's default. */
export const DEFAULT_ADMIN_MAX_BODY = 4 * 1024 * 1024;

export const startControlServer = (opts: ControlServerOptions) => {
  const app = buildControlApp(opts);
  app.listen({
    hostname: opts.host,
    port: opts.port,
    idleTimeout: 0,
    maxRequestBodySize: opts.maxBodyBytes ?? DEFAULT_ADMIN_MAX_BODY,
    ...tlsOption(opts.tls),
  });
  return app;
};
