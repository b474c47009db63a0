import { t } from 'elysia';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { currentRevision } from '../../propagation/load.ts';
import type { ControllerStatus } from '../../propagation/controller.ts';
import { OptTimestamp, ts } from '../schemas.ts';

/** Propagation status. Stages: saved → recorded → pending → serving (see the inference seed). */
export const configStatusOps = (deps: ControlDeps, local: () => ControllerStatus | undefined): OpDef[] => [
  op({
    service: 'admin.v1.AdminService',
    group: 'Configuration status',
    name: 'GetConfigStatus',
    summary: 'Desired and applied configuration revision per data plane, and the stage of the newest change',
    permission: 'authenticated',
    input: t.Object({ dataplaneId: t.Optional(t.String({ maxLength: 253 })) }, { additionalProperties: false }),
    output: t.Object({
      dataplanes: t.Array(
        t.Object({
          dataplaneId: t.String({ description: "'local' for the embedded data plane" }),
          desiredRevision: t.String({ description: 'int64' }),
          appliedRevision: t.String({ description: 'int64' }),
          stage: t.String({ description: 'saved, recorded, pending or serving' }),
          lastPollAt: OptTimestamp(),
          lastDriftSweepAt: OptTimestamp(),
          faults: t.Array(t.String()),
        }),
      ),
    }),
    handler: async (input) => {
      const desired = await currentRevision(deps.db);
      const s = local();
      const planes = [];
      if (s && (input.dataplaneId === undefined || input.dataplaneId === '' || input.dataplaneId === 'local')) {
        planes.push({
          dataplaneId: 'local',
          desiredRevision: String(desired),
          appliedRevision: String(Math.max(0, s.appliedRevision)),
          stage: s.appliedRevision >= desired ? 'serving' : 'pending',
          ...(s.lastPollAt ? { lastPollAt: ts(s.lastPollAt) } : {}),
          ...(s.lastDriftSweepAt ? { lastDriftSweepAt: ts(s.lastDriftSweepAt) } : {}),
          faults: s.lastError ? [s.lastError] : [],
        });
      }
      return { dataplanes: planes };
    },
  }),
];
