import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import { configChanges } from '../store/schema/index.ts';

/** What every management service needs. */
export interface ControlDeps {
  db: Db;
  secrets: SecretBox;
  /** Called after a committed change; resolves when the local data plane serves it (or soon after). */
  changed: () => Promise<void>;
}

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Change {
  kind: string;
  entity: string;
  entityId: string;
  customerId?: string | null;
  projectId?: string | null;
  payload?: Record<string, unknown>;
}

/**
 * Writes the configuration-change record(s) of a mutation, inside the mutation's transaction.
 * Addressed to the embedded data plane (`local`); data planes and project gateways affected are
 * added by the propagation layer as it learns them.
 */
export const recordChange = async (tx: Tx, change: Change, targets: readonly string[] = ['local']): Promise<void> => {
  await tx.insert(configChanges).values(
    targets.map((target) => ({
      target,
      kind: change.kind,
      entity: change.entity,
      entityId: change.entityId,
      customerId: change.customerId ?? null,
      projectId: change.projectId ?? null,
      payload: change.payload ?? {},
    })),
  );
};
