import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import { mountOperations, type OpDef } from './connect.ts';
import type { ManagementAuth } from './auth.ts';

export interface ControlServerOptions {
  host: string;
  port: number;
  ops: readonly OpDef[];
  auth: ManagementAuth;
  ready: () => boolean;
  version: string;
}

/** The management listener: Connect-style operations, health, and the OpenAPI document. */
export const buildControlApp = (opts: ControlServerOptions) =>
  new Elysia({ normalize: false })
    .use(
      openapi({
        path: '/openapi',
        documentation: {
          info: { title: 'AI gateway management API', version: opts.version, description: 'Connect-protocol unary JSON: POST /{service}/{Operation}.' },
          components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .get('/healthz', ({ set }) => {
      if (opts.ready()) return { status: 'ok' };
      set.status = 503;
      return { status: 'starting' };
    }, { detail: { hide: true } })
    .get('/readyz', ({ set }) => {
      set.status = opts.ready() ? 200 : 503;
      return { status: opts.ready() ? 'ok' : 'starting' };
    }, { detail: { hide: true } })
    .use(mountOperations(opts.ops, { authenticate: opts.auth.authenticate, authorize: opts.auth.authorize }));

export const startControlServer = (opts: ControlServerOptions) => {
  const app = buildControlApp(opts);
  app.listen({ hostname: opts.host, port: opts.port, idleTimeout: 0 });
  return app;
};
