import { and, asc, eq } from 'drizzle-orm';
import { connectError } from '../../core/errors.ts';
import { checkGuardrail, GuardrailOps } from '../../api/ops/guardrails.ts';
import { type GuardrailRow, guardrails } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { ts } from '../../api/kit.ts';

/**
 * Guardrails (contract §3.2): checks of a project's requests (input) and answers (output) —
 * `regex`, `pii` (email, phone, credit_card with Luhn, iban with checksum, ssn, ip_address) and
 * `max_input_tokens` — that block, redact or flag. Enforced by the data planes
 * (src/data-plane/policies/guardrails.ts); docs/governance.md.
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
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const change = (customerId: string, projectId: string, name: string) => ({
  resource: 'guardrail' as const,
  entityId: name,
  customerId,
  projectId,
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

export const guardrailOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateGuardrail, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const shape = checkGuardrail({
        stage: input.stage,
        kind: input.kind,
        pattern: input.pattern || null,
        piiTypes: input.piiTypes ?? [],
        maxTokens: input.maxTokens ?? null,
        action: input.action,
        documents: input.documents ?? 'scan',
      });
      const project = await lockProject(tx, input.customerId, input.projectId);
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
              ...shape,
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
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const cur = await lockGuardrail(tx, project.id, input.name);
      const shape = checkGuardrail({
        stage: input.stage ?? cur.stage,
        kind: input.kind ?? cur.kind,
        pattern: input.pattern !== undefined ? input.pattern || null : cur.pattern,
        piiTypes: input.piiTypes ?? cur.piiTypes,
        maxTokens: input.maxTokens ?? cur.maxTokens,
        action: input.action ?? cur.action,
        documents: input.documents ?? cur.documents,
      });
      const [row] = await tx
        .update(guardrails)
        .set({ ...shape, updatedAt: new Date() })
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
