import { Type as t } from '@sinclair/typebox';
import { OptTimestamp } from '../kit.ts';
import { defineOp } from '../op.ts';

/** Propagation status. Stages: saved → recorded → pending → serving (see the inference seed). */

export const PlaneStatusOut = t.Object({
  dataplaneId: t.String({ description: "'local' for the embedded data plane, else the workspace slug" }),
  customerId: t.Optional(t.String()),
  desiredRevision: t.String({ description: 'int64' }),
  appliedRevision: t.String({ description: 'int64' }),
  stage: t.String({ description: 'saved, recorded, pending or serving' }),
  lastPollAt: OptTimestamp(),
  lastDriftSweepAt: OptTimestamp(),
  faults: t.Array(t.String()),
});

export const ConfigStatusOps = {
  GetConfigStatus: defineOp({
    service: 'admin.v1.AdminService',
    group: 'Configuration status',
    name: 'GetConfigStatus',
    summary:
      'Desired and applied configuration revision per data plane (the embedded `local` and every workspace), and the stage of the newest change',
    notes:
      "Lists the embedded data plane ('local') and every live data plane (workspace) the caller may see: desiredRevision is the newest change record addressed to it, appliedRevision what it reported at its last pull, stage serving / pending (polling, not applied yet) / recorded (never polled). A change not applied after 30 minutes is a fault.",
    permission: 'authenticated',
    input: t.Object({ dataplaneId: t.Optional(t.String({ maxLength: 253 })) }, { additionalProperties: false }),
    output: t.Object({ dataplanes: t.Array(PlaneStatusOut) }),
  }),
};
