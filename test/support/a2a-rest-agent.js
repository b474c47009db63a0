import { restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';

/**
 * The SDK's own HTTP+JSON binding (`restHandler`, as `@a2a-js/sdk/server/express` mounts it) on an
 * Express listener, in front of a request handler given later (the agent's, so both bindings share
 * one task store). Plain JS: Express ships no types; a2a-rest-agent.d.ts declares this module.
 */
export const startRestBinding = (handlerOf, bearer) =>
  new Promise((resolve) => {
    const app = express();
    const calls = [];
    let router;
    app.use('/rest', (req, res, next) => {
      calls.push({
        method: req.method,
        path: req.path,
        authorization: req.headers.authorization ?? null,
        traceparent: req.headers.traceparent ?? null,
        correlation: req.headers['x-gateway-correlation-id'] ?? null,
      });
      if (bearer && req.headers.authorization !== `Bearer ${bearer}`) {
        res.status(401).json({ error: { code: 401, status: 'UNAUTHENTICATED', message: 'unauthorized', details: [] } });
        return;
      }
      router ??= restHandler({ requestHandler: handlerOf(), userBuilder: UserBuilder.noAuthentication });
      router(req, res, next);
    });
    const server = app.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/rest`,
        calls,
        stop: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
