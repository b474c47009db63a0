import { and, asc, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { PII_TYPES } from '../../governance/pii.ts';
import { type GuardrailRow, guardrails } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { CustomerRef, Enum, Int32, PATTERNS, ProjectKey, Str, Success, Timestamp, ts } from '../schemas.ts';

/**
 * Guardrails (contract §3.2): checks of a project's requests (input) and answers (output) —
 * `regex`, `pii` (email, phone, credit_card with Luhn, iban with checksum, ssn, ip_address) and
 * `max_input_tokens` — that block, redact or flag. Enforced by the data planes
 * (src/data-plane/policies/guardrails.ts); docs/governance.md.
 */

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Guardrails';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });
const STAGES = ['input', 'output', 'both'] as const;
const KINDS = ['regex', 'pii', 'max_input_tokens'] as const;
const ACTIONS = ['block', 'redact', 'flag'] as const;
const GuardrailName = () => Str(1, 253, { pattern: PATTERNS.ID, description: 'guardrail name (ID, 1-253), unique within the project' });

const Fields = {
  stage: Enum(STAGES, 'input, output or both'),
  kind: Enum(KINDS, 'regex, pii or max_input_tokens'),
  pattern: t.Optional(Str(0, 1024, { description: 'regex kind: an ECMAScript regular expression (1-1024), matched with the u flag' })),
  piiTypes: t.Optional(t.Array(Enum(PII_TYPES), { maxItems: PII_TYPES.length, uniqueItems: true, description: 'pii kind: the types to detect (at least one)' })),
  maxTokens: t.Optional(Int32({ minimum: 1, maximum: 2_000_000, description: 'max_input_tokens kind: the largest estimated input (1..2000000)' })),
  action: Enum(ACTIONS, 'block, redact or flag (max_input_tokens: block or flag)'),
};

const GuardrailOut = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    name: t.String(),
    stage: t.String(),
    kind: t.String(),
    pattern: t.Optional(t.String()),
    piiTypes: t.Array(t.String()),
    maxTokens: t.Optional(t.Integer()),
    action: t.String(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Guardrail' },
);

interface Shape {
  stage: string;
  kind: string;
  pattern: string | null;
  piiTypes: string[];
  maxTokens: number | null;
  action: string;
}

/** The rules across fields; returns the normalised shape. */
const checked = (g: Shape): Shape => {
  if (g.kind === 'regex') {
    if (!g.pattern) throw connectError('invalid_argument', "invalid field 'pattern': required for kind 'regex'", 'pattern');
    try {
      new RegExp(g.pattern, 'gu');
    } catch {
      throw connectError('invalid_argument', "invalid field 'pattern': not a valid regular expression", 'pattern');
    }
    return { ...g, piiTypes: [], maxTokens: null };
  }
  if (g.kind === 'pii') {
    if (g.piiTypes.length === 0) throw connectError('invalid_argument', "invalid field 'piiTypes': give at least one type for kind 'pii'", 'piiTypes');
    return { ...g, pattern: null, maxTokens: null };
  }
  if (g.maxTokens === null) throw connectError('invalid_argument', "invalid field 'maxTokens': required for kind 'max_input_tokens'", 'maxTokens');
  if (g.action === 'redact') throw connectError('invalid_argument', "invalid field 'action': max_input_tokens can block or flag, not redact", 'action');
  if (g.stage !== 'input') throw connectError('invalid_argument', "invalid field 'stage': max_input_tokens applies to the input only", 'stage');
  return { ...g, pattern: null, piiTypes: [] };
};

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
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const change = (customerId: string, projectId: string, name: string) => ({ kind: 'GUARDRAIL', entity: 'guardrail', entityId: name, customerId, projectId });

const lockGuardrail = async (tx: Tx, projectUuid: string, name: string): Promise<GuardrailRow> => {
  const [row] = await tx.select().from(guardrails).where(and(eq(guardrails.projectUuid, projectUuid), eq(guardrails.name, name))).for('update');
  if (!row) throw connectError('not_found', `guardrail '${name}' not found`, 'name');
  return row;
};

export const guardrailOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'guardrail',
    resourceId: (i) => rid(i.customerId, i.projectId, i.name),
    service: ADMIN,
    group: GROUP,
    name: 'CreateGuardrail',
    summary: 'Create a guardrail of a project',
    notes:
      "kind regex needs pattern; pii needs piiTypes; max_input_tokens needs maxTokens, stage 'input' and action block or flag. A blocked request is 400 invalid_request_error / guardrail_blocked naming the guardrail; redact replaces a match with [REDACTED:<type>] (the guardrail's name for regex); flag records the guardrail's name on the request record (guardrail_flags). Names are unique within the project (already_exists).",
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, name: GuardrailName(), ...Fields }, { additionalProperties: false }),
    output: t.Object({ guardrail: GuardrailOut }),
    handler: async (input, { tx, change: record }) => {
      const shape = checked({ stage: input.stage, kind: input.kind, pattern: input.pattern || null, piiTypes: input.piiTypes ?? [], maxTokens: input.maxTokens ?? null, action: input.action });
      const project = await lockProject(tx, input.customerId, input.projectId);
      const now = new Date();
      const [row] = await uniquely(
        () =>
          tx
            .insert(guardrails)
            .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, name: input.name, ...shape, createdAt: now, updatedAt: now })
            .returning(),
        `guardrail '${input.name}' already exists in project '${project.projectId}'`,
        'name',
      );
      await record(change(project.customerId, project.projectId, input.name));
      return { guardrail: view(row as GuardrailRow) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetGuardrail',
    summary: 'A guardrail by name',
    permission: 'project_member',
    scope,
    input: t.Object({ ...Addr, name: GuardrailName() }, { additionalProperties: false }),
    output: t.Object({ guardrail: GuardrailOut }),
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const [row] = await deps.db.select().from(guardrails).where(and(eq(guardrails.projectUuid, project.id), eq(guardrails.name, input.name)));
      if (!row) throw connectError('not_found', `guardrail '${input.name}' not found`, 'name');
      return { guardrail: view(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListGuardrails',
    summary: "A project's guardrails (ordered by name)",
    permission: 'project_member',
    scope,
    input: t.Object(Addr, { additionalProperties: false }),
    output: t.Object({ guardrails: t.Array(GuardrailOut) }),
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const rows = await deps.db.select().from(guardrails).where(eq(guardrails.projectUuid, project.id)).orderBy(asc(guardrails.name));
      return { guardrails: rows.map(view) };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'guardrail',
    resourceId: (i) => rid(i.customerId, i.projectId, i.name),
    service: ADMIN,
    group: GROUP,
    name: 'UpdateGuardrail',
    summary: 'Update a guardrail (unset fields stay unchanged; the same rules as CreateGuardrail apply to the result)',
    permission: 'project_admin',
    scope,
    input: t.Object(
      {
        ...Addr,
        name: GuardrailName(),
        stage: t.Optional(Fields.stage),
        kind: t.Optional(Fields.kind),
        pattern: Fields.pattern,
        piiTypes: Fields.piiTypes,
        maxTokens: Fields.maxTokens,
        action: t.Optional(Fields.action),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ guardrail: GuardrailOut }),
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const cur = await lockGuardrail(tx, project.id, input.name);
      const shape = checked({
        stage: input.stage ?? cur.stage,
        kind: input.kind ?? cur.kind,
        pattern: input.pattern !== undefined ? input.pattern || null : cur.pattern,
        piiTypes: input.piiTypes ?? cur.piiTypes,
        maxTokens: input.maxTokens ?? cur.maxTokens,
        action: input.action ?? cur.action,
      });
      const [row] = await tx.update(guardrails).set({ ...shape, updatedAt: new Date() }).where(eq(guardrails.id, cur.id)).returning();
      await record(change(project.customerId, project.projectId, input.name));
      return { guardrail: view(row as GuardrailRow) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'guardrail',
    resourceId: (i) => rid(i.customerId, i.projectId, i.name),
    service: ADMIN,
    group: GROUP,
    name: 'DeleteGuardrail',
    summary: 'Delete a guardrail',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, name: GuardrailName() }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const cur = await lockGuardrail(tx, project.id, input.name);
      await tx.delete(guardrails).where(eq(guardrails.id, cur.id));
      await record(change(project.customerId, project.projectId, input.name));
      return { success: true };
    },
  }),
];
