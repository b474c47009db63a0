import { type ResourceName, RESOURCES } from '../api/resources.ts';
import type { TelemetryForwarder } from '../audit/forwarder.ts';
import type { Counters } from '../governance/counters.ts';
import type { TargetHealthView } from '../governance/breaker.ts';
import { and, eq, isNull } from 'drizzle-orm';
import type { SecretBox } from '../core/secrets.ts';
import type { ControllerStatus } from '../propagation/controller.ts';
import type { ChangeSignal } from '../propagation/signal.ts';
import type { Db } from '../store/db.ts';
import type { OidcIssuer } from './oidc.ts';
import { configChanges, dataplanes, projectGatewayProjects, projectGateways } from '../store/schema/index.ts';

/** What some management services need of the process beyond the store (passed as `hooks`). */
export interface ManagementHooks {
  /** Flushes batched request records before a search. */
  flushRecords: () => Promise<void>;
  /** The embedded data plane's controller status. */
  localStatus: () => ControllerStatus | undefined;
  /** The telemetry forwarder of this management process (TriggerAuditForward drains its audit_logs configs). */
  auditForwarder?: TelemetryForwarder;
}

/** What every management service needs. */
export interface ControlDeps {
  db: Db;
  /**
   * DATABASE_READ_URL's replica: request-record searches and usage read here (they may trail the
   * primary by the replication lag). Configuration reads stay on `db` (read-your-writes).
   */
  readDb?: Db;
  secrets: SecretBox;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE: anyone may point connections at private addresses. */
  upstreamAllowPrivate?: boolean;
  /** The embedded store (PGlite): secrets given in plaintext where PostgreSQL mode demands a reference are accepted (and wrapped). */
  embeddedStore?: boolean;
  /**
   * Fired when the configuration revision may have moved (a NOTIFY heard, or a poll saw it); the
   * pull protocol's held calls wait on it. A write never waits for propagation: it commits and
   * NOTIFYs (mutation.ts).
   */
  configChanged?: ChangeSignal;
  /**
   * Called when a write records a configuration change (inside its transaction, before the
   * commit): the embedded data plane's read-your-writes window (PipelineDeps.catchUp) starts here.
   */
  changeRecorded?: () => void;
  /** GATEWAY_OIDC_*: the OpenID Provider whose ID tokens ExchangeOidcToken accepts (unset: no single sign-on). */
  oidc?: OidcIssuer;
  /** The budget counters the data planes charge (Redis, or the embedded data plane's); read by GetBudget. */
  counters?: Counters;
  /**
   * The circuit breakers' state as the data planes see it (GetTargetHealth, contract §14): the
   * Redis hash the data planes share when REDIS_URL is set, else the embedded data plane's own.
   */
  targetHealth?: () => Promise<TargetHealthView[]>;
  /** Reads request/response bodies kept beside a record (`bodies_at`, src/records/body-files.ts). */
  recordBodies?: (at: string) => Promise<{ requestBody: unknown; responseBody: unknown }>;
}

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Reader = Db | Tx;

/** The embedded data plane's change-record target. */
export const LOCAL_TARGET = 'local';

/** A configuration change: which resource (its kind and entity follow from src/api/resources.ts) and which one of it. */
export interface Change {
  resource: ResourceName;
  entityId: string;
  customerId?: string | null;
  projectId?: string | null;
  payload?: Record<string, unknown>;
}

/**
 * Who serves what (the addressing rule of configuration-change records):
 * - a project's configuration may be served by every active data plane of its customer (a data
 *   plane of another project can still host a gateway the project is attached to) and by every
 *   active project gateway the project is attached to;
 * - a customer-wide change goes to all of the customer's data planes and project gateways;
 * - a global change (the catalog) goes to every active data plane and project gateway;
 * - the embedded data plane (`local`) serves everything and gets every change.
 * Targets are data-plane and project-gateway UUIDs.
 */
export const targetsOf = async (tx: Reader, scope: { customerId?: string | null; projectId?: string | null }): Promise<string[]> => {
  const out = new Set<string>([LOCAL_TARGET]);
  const planes = await tx
    .select({ id: dataplanes.id })
    .from(dataplanes)
    .where(and(isNull(dataplanes.deletedAt), scope.customerId ? eq(dataplanes.customerId, scope.customerId) : undefined));
  for (const p of planes) out.add(p.id);
  const gateways = scope.projectId
    ? await tx
        .select({ id: projectGateways.id })
        .from(projectGateways)
        .innerJoin(projectGatewayProjects, eq(projectGatewayProjects.gatewayId, projectGateways.id))
        .where(
          and(
            isNull(projectGateways.deletedAt),
            eq(projectGatewayProjects.customerId, scope.customerId ?? ''),
            eq(projectGatewayProjects.projectId, scope.projectId),
          ),
        )
    : await tx
        .select({ id: projectGateways.id })
        .from(projectGateways)
        .where(and(isNull(projectGateways.deletedAt), scope.customerId ? eq(projectGateways.customerId, scope.customerId) : undefined));
  for (const g of gateways) out.add(g.id);
  return [...out];
};

/**
 * Writes the configuration-change record(s) of a mutation, inside the mutation's transaction: one
 * row per affected data plane and project gateway (see `targetsOf`), computed from the change's
 * customer and project unless `targets` are given. `extraTargets` are added (e.g. the data plane a
 * gateway moved away from).
 */
export const recordChange = async (
  tx: Tx,
  change: Change,
  targets?: readonly string[],
  extraTargets: readonly string[] = [],
): Promise<void> => {
  const all = new Set([...(targets ?? (await targetsOf(tx, change))), ...extraTargets]);
  await tx.insert(configChanges).values(
    [...all].map((target) => ({
      target,
      kind: RESOURCES[change.resource].kind,
      entity: RESOURCES[change.resource].entity,
      entityId: change.entityId,
      customerId: change.customerId ?? null,
      projectId: change.projectId ?? null,
      payload: change.payload ?? {},
    })),
  );
};
