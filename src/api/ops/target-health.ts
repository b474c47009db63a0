import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Int32, ProjectKey, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';

/**
 * Target health (contract §14): the circuit breakers of a project's targets as the serving data
 * planes see them (the Redis hash they share when REDIS_URL is set; else the embedded data plane's).
 */

const ADMIN = 'admin.v1.AdminService';

const TargetHealth = t.Object(
  {
    model: t.String({ description: 'public model of the route (or `*` for a `global-fallback` target)' }),
    connection: t.String({ description: 'provider connection name' }),
    upstreamModel: t.String({ description: 'upstream model id' }),
    state: t.Union([t.Literal('CLOSED'), t.Literal('OPEN'), t.Literal('HALF_OPEN'), t.Literal('COOLING')], {
      description: 'CLOSED: served; OPEN: no request sent; HALF_OPEN: one probe in flight; COOLING: honouring a Retry-After',
    }),
    reason: t.Optional(
      t.Union([t.Literal('failures'), t.Literal('auth'), t.Literal('rate_limited')], {
        description:
          'why it is not CLOSED: failures (5xx, time-outs, connection errors), auth (the connection was refused its credentials), rate_limited (429 with Retry-After)',
      }),
    ),
    openedAt: t.Optional(Timestamp()),
    failures: Int32({ description: 'retryable failures within the window now' }),
    latencyMsP50: Int32({ description: 'median time to the answer (or first event) of the recent answers, ms; 0 before any' }),
    lastError: t.Optional(t.String({ description: 'the last failure: upstream status, code and message (never a secret)' })),
  },
  { description: 'TargetHealth' },
);

export const TargetHealthOps = {
  GetTargetHealth: defineOp({
    service: ADMIN,
    group: 'Routes',
    name: 'GetTargetHealth',
    summary: "The circuit breakers of a project's route targets",
    notes: [
      "One entry per target (connection × upstream model) of the project's routes and `global-fallback` setting, CLOSED with no figures when no data plane reported it yet.",
      "A connection benched for its credentials (reason `auth`) shows on each of its targets. With REDIS_URL the data planes share their breakers and this reads their shared state; without it the management plane sees its embedded data plane's only (a separate data plane's breakers are its own: see docs/resilience.md).",
    ].join('\n'),
    permission: 'project_member',
    input: t.Object({ customerId: CustomerRef(), projectId: ProjectKey() }, { additionalProperties: false }),
    output: t.Object({ targets: t.Array(TargetHealth) }),
  }),
};
