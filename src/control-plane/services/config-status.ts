import { and, asc, eq, gt, inArray, isNull, min, sql } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { ConfigStatusOps } from '../../api/ops/config-status.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, ManagementHooks } from '../deps.ts';
import { currentRevision } from '../../propagation/load.ts';
import { configChanges, dataplanes, dataplaneStatus, projectGateways } from '../../store/schema/index.ts';
import { desiredRevisionOf } from '../dataplane-protocol.ts';

/** A change not applied after this long is a fault (the seed's outer bound). */
export const FAULT_AFTER_MS = 30 * 60_000;

/**
 * Stage of a data plane's newest change: `serving` (applied), `pending` (its controller polls but
 * has not applied it), `recorded` (change records exist; no controller has ever polled).
 */
const stageOf = (applied: number, desired: number, polled: boolean): string =>
  applied >= desired ? 'serving' : polled ? 'pending' : 'recorded';

/** The oldest change addressed to `targets` newer than `applied`, when older than the fault bound. */
const faultOf = async (deps: ControlDeps, targets: string[], applied: number): Promise<string[]> => {
  const [row] = await deps.db
    .select({ at: min(configChanges.createdAt) })
    .from(configChanges)
    .where(and(inArray(configChanges.target, targets), gt(configChanges.id, applied)));
  const at = row?.at ? new Date(row.at) : undefined;
  return at && Date.now() - at.getTime() > FAULT_AFTER_MS ? [`a change recorded at ${ts(at)} is not applied after 30 minutes`] : [];
};

/** Propagation status. Stages: saved → recorded → pending → serving (see the inference seed). */
export const configStatusOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => [
  op(ConfigStatusOps.GetConfigStatus, {
    handler: async (input, ctx) => {
      const want = input.dataplaneId ?? '';
      const s = hooks.localStatus();
      const planes = [];
      if (s && (want === '' || want === 'local')) {
        const desired = await currentRevision(deps.db);
        const faults = s.lastError ? [s.lastError] : [];
        if (s.appliedRevision < desired) faults.push(...(await faultOf(deps, ['local'], s.appliedRevision)));
        planes.push({
          dataplaneId: 'local',
          desiredRevision: String(desired),
          appliedRevision: String(Math.max(0, s.appliedRevision)),
          stage: s.appliedRevision >= desired ? 'serving' : 'pending',
          ...(s.lastPollAt ? { lastPollAt: ts(s.lastPollAt) } : {}),
          ...(s.lastDriftSweepAt ? { lastDriftSweepAt: ts(s.lastDriftSweepAt) } : {}),
          faults,
        });
      }
      if (want === 'local') return { dataplanes: planes };
      const rows = await deps.db
        .select({ plane: dataplanes, status: dataplaneStatus })
        .from(dataplanes)
        .leftJoin(dataplaneStatus, sql`${dataplaneStatus.dataplaneId} = ${dataplanes.id}::text`)
        .where(
          and(
            isNull(dataplanes.deletedAt),
            ctx.principal.kind === 'user' ? eq(dataplanes.customerUuid, ctx.principal.customerUuid) : undefined,
            want !== '' ? eq(dataplanes.slug, want) : undefined,
          ),
        )
        .orderBy(asc(dataplanes.customerId), asc(dataplanes.slug));
      for (const { plane, status } of rows) {
        const gws = await deps.db
          .select({ id: projectGateways.id })
          .from(projectGateways)
          .where(
            and(
              eq(projectGateways.customerUuid, plane.customerUuid),
              eq(projectGateways.workspaceId, plane.slug),
              isNull(projectGateways.deletedAt),
            ),
          );
        const targets = [plane.id, ...gws.map((g) => g.id)];
        const desired = await desiredRevisionOf(deps, targets);
        const applied = status?.appliedRevision ?? 0;
        planes.push({
          dataplaneId: plane.slug,
          customerId: plane.customerId,
          desiredRevision: String(desired),
          appliedRevision: String(applied),
          stage: stageOf(applied, desired, Boolean(status?.lastPollAt)),
          ...(status?.lastPollAt ? { lastPollAt: ts(status.lastPollAt) } : {}),
          ...(status?.lastDriftSweepAt ? { lastDriftSweepAt: ts(status.lastDriftSweepAt) } : {}),
          faults: applied < desired ? await faultOf(deps, targets, applied) : [],
        });
      }
      return { dataplanes: planes };
    },
  }),
];
