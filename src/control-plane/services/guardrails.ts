import { and, asc, eq, isNull } from 'drizzle-orm';
import { connectError } from '../../core/errors.ts';
import { checkGuardrail, GuardrailOps, type GuardrailShape } from '../../api/ops/guardrails.ts';
import { isProviderKind } from '../../governance/guardrail-providers.ts';
import { type GuardrailRow, guardrails, providerConnections } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { checkUpstreamUrls } from '../upstream-addresses.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { ts } from '../../api/kit.ts';

/**
 * Guardrails (contract §3.2): checks of a project's requests (input) and answers (output) —
 * `regex`, `pii` (email, phone, credit_card with Luhn, iban with checksum, ssn, ip_address) and
 * `max_input_tokens` — that block, redact or flag, and the provider kinds of contract §15 (a
 * vendor's verdict; their `provider.authValue` is wrapped at rest and never returned, their url
 * follows the upstream address rule). Enforced by the data planes
 * (src/data-plane/policies/guardrails.ts, src/data-plane/guardrail-vendors/); docs/governance.md.
 */

const { CreateGuardrail, GetGuardrail, ListGuardrails, UpdateGuardrail, DeleteGuardrail } = GuardrailOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });
const idOf = (i: { customerId?: unknown; projectId?: unknown; name?: unknown }) => rid(i.customerId, i.projectId, i.name);

const view = (r: GuardrailRow) => ({
  id: r.id,
  customerId: r.customerId,
  projectId: r.projectId,
  name: r.name,
  stage: r.stage,
  kind: r.kind,
  ...(r.pattern !== null ? { pattern: r.pattern } : {}),
  piiTypes: r.piiTypes,
  ...(r.maxTokens !== null ? { maxTokens: r.maxTokens } : {}),
  action: r.action,
  documents: r.documents,
  ...(r.provider !== null
    ? {
        provider: {
          ...(r.provider.connectionId !== undefined ? { connectionId: r.provider.connectionId } : {}),
          ...(r.provider.url !== undefined ? { url: r.provider.url } : {}),
          options: r.provider.options ?? {},
          hasAuthValue: r.authValueWrapped !== null,
        },
      }
    : {}),
  ...(r.timeoutMs !== null ? { timeoutMs: r.timeoutMs } : {}),
  ...(r.failMode !== null ? { failMode: r.failMode } : {}),
  ...(r.windowChars !== null ? { windowChars: r.windowChars } : {}),
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const change = (customerId: string, projectId: string, name: string) => ({
  resource: 'guardrail' as const,
  entityId: name,
  customerId,
  projectId,
});

/** The columns of a checked shape. */
const stored = (g: GuardrailShape) => ({
  stage: g.stage,
  kind: g.kind,
  pattern: g.pattern,
  piiTypes: g.piiTypes,
  maxTokens: g.maxTokens,
  action: g.action,
  documents: g.documents,
  provider: g.provider,
  timeoutMs: g.timeoutMs,
  failMode: g.failMode,
  windowChars: g.windowChars,
});

const lockGuardrail = async (tx: Tx, projectUuid: string, name: string): Promise<GuardrailRow> => {
  const [row] = await tx
    .select()
    .from(guardrails)
    .where(and(eq(guardrails.projectUuid, projectUuid), eq(guardrails.name, name)))
    .for('update');
  if (!row) throw connectError('not_found', `guardrail '${name}' not found`, 'name');
  return row;
};

interface ProviderInput {
  connectionId?: string;
  url?: string;
  authValue?: string;
  options?: Record<string, unknown>;
}

/**
 * The provider block as stored (the credential apart): the given one merged onto the stored one
 * (an update's unset fields stay unchanged, `''` removes `connectionId` or `url`, `options` replaces
 * the whole object).
 */
const providerOf = (p: ProviderInput | undefined, stored: GuardrailShape['provider'] = null): GuardrailShape['provider'] => {
  if (p === undefined) return stored;
  const connectionId = p.connectionId ?? stored?.connectionId;
  const url = p.url ?? stored?.url;
  const options = p.options ?? stored?.options;
  return {
    ...(connectionId ? { connectionId } : {}),
    ...(url ? { url } : {}),
    ...(options !== undefined ? { options } : {}),
  };
};

/**
 * What a provider guardrail needs beyond its shape: its connection exists in the project, its url
 * passes the upstream address rule (returns whether it carries the private-address allowance).
 */
const checkReach = async (
  deps: ControlDeps,
  tx: Tx,
  principal: Principal,
  projectUuid: string,
  shape: GuardrailShape,
  current?: GuardrailRow,
): Promise<boolean> => {
  if (!isProviderKind(shape.kind) || shape.provider === null) return false;
  const conn = shape.provider.connectionId;
  if (conn !== undefined) {
    const [c] = await tx
      .select({ id: providerConnections.id })
      .from(providerConnections)
      .where(
        and(eq(providerConnections.projectUuid, projectUuid), eq(providerConnections.name, conn), isNull(providerConnections.deletedAt)),
      );
    if (!c)
      throw connectError(
        'invalid_argument',
        `invalid field 'provider.connectionId': no connection '${conn}' in the project`,
        'provider.connectionId',
      );
  }
  const url = shape.provider.url;
  if (url === undefined) return false;
  const before = current?.provider?.url;
  return checkUpstreamUrls(
    principal,
    deps.upstreamAllowPrivate === true,
    new Map([['provider.url', url]]),
    current ? { urls: new Map(before !== undefined ? [['provider.url', before]] : []), allowPrivate: current.allowPrivate } : undefined,
  );
};

export const guardrailOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateGuardrail, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record, principal }) => {
      const shape = checkGuardrail({
        stage: input.stage,
        kind: input.kind,
        pattern: input.pattern || null,
        piiTypes: input.piiTypes ?? [],
        maxTokens: input.maxTokens ?? null,
        action: input.action,
        documents: input.documents ?? 'scan',
        provider: providerOf(input.provider),
        hasAuthValue: input.provider?.authValue !== undefined,
        timeoutMs: input.timeoutMs ?? null,
        failMode: input.failMode ?? null,
        windowChars: input.windowChars ?? null,
      });
      const project = await lockProject(tx, input.customerId, input.projectId);
      const allowPrivate = await checkReach(deps, tx, principal, project.id, shape);
      const authValue = input.provider?.authValue;
      const now = new Date();
      const [row] = await uniquely(
        () =>
          tx
            .insert(guardrails)
            .values({
              projectUuid: project.id,
              customerId: project.customerId,
              projectId: project.projectId,
              name: input.name,
              ...stored(shape),
              authValueWrapped: authValue !== undefined ? deps.secrets.wrap(authValue) : null,
              allowPrivate,
              createdAt: now,
              updatedAt: now,
            })
            .returning(),
        `guardrail '${input.name}' already exists in project '${project.projectId}'`,
        'name',
      );
      await record(change(project.customerId, project.projectId, input.name));
      return { guardrail: view(row as GuardrailRow) };
    },
  }),
  op(GetGuardrail, {
    scope,
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const [row] = await deps.db
        .select()
        .from(guardrails)
        .where(and(eq(guardrails.projectUuid, project.id), eq(guardrails.name, input.name)));
      if (!row) throw connectError('not_found', `guardrail '${input.name}' not found`, 'name');
      return { guardrail: view(row) };
    },
  }),
  op(ListGuardrails, {
    scope,
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const rows = await deps.db.select().from(guardrails).where(eq(guardrails.projectUuid, project.id)).orderBy(asc(guardrails.name));
      return { guardrails: rows.map(view) };
    },
  }),
  mutation(deps, UpdateGuardrail, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record, principal }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const cur = await lockGuardrail(tx, project.id, input.name);
      const kind = input.kind ?? cur.kind;
      // A provider block given replaces the stored one; its credential is kept unless a new one is given.
      const provider = !isProviderKind(kind) ? null : providerOf(input.provider, cur.provider);
      const keepSecret = isProviderKind(kind) && input.provider?.authValue === undefined && cur.authValueWrapped !== null;
      const builtIn = !isProviderKind(kind);
      const shape = checkGuardrail({
        stage: input.stage ?? cur.stage,
        kind: input.kind ?? cur.kind,
        pattern: input.pattern !== undefined ? input.pattern || null : cur.pattern,
        piiTypes: input.piiTypes ?? cur.piiTypes,
        maxTokens: input.maxTokens ?? cur.maxTokens,
        action: input.action ?? cur.action,
        documents: input.documents ?? cur.documents,
        provider: input.provider === undefined && builtIn ? null : provider,
        hasAuthValue: input.provider?.authValue !== undefined || keepSecret,
        timeoutMs: input.timeoutMs ?? (builtIn ? null : cur.timeoutMs),
        failMode: input.failMode ?? (builtIn ? null : cur.failMode),
        windowChars: input.windowChars ?? (builtIn ? null : cur.windowChars),
      });
      const allowPrivate = await checkReach(deps, tx, principal, project.id, shape, cur);
      const authValue = input.provider?.authValue;
      const authValueWrapped = authValue !== undefined ? deps.secrets.wrap(authValue) : keepSecret ? cur.authValueWrapped : null;
      const [row] = await tx
        .update(guardrails)
        .set({ ...stored(shape), authValueWrapped, allowPrivate, updatedAt: new Date() })
        .where(eq(guardrails.id, cur.id))
        .returning();
      await record(change(project.customerId, project.projectId, input.name));
      return { guardrail: view(row as GuardrailRow) };
    },
  }),
  mutation(deps, DeleteGuardrail, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const cur = await lockGuardrail(tx, project.id, input.name);
      await tx.delete(guardrails).where(eq(guardrails.id, cur.id));
      await record(change(project.customerId, project.projectId, input.name));
      return { success: true };
    },
  }),
];
