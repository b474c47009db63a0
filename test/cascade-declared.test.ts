import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, getTableColumns, getTableName, is, isNull, sql } from 'drizzle-orm';
import { getTableConfig, PgTable, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { DECLARATIONS } from '../src/api/index.ts';
import { type CascadeStep, cascadePlan, KEPT_ON_DELETE, STORE_TABLES } from '../src/control-plane/cascade.ts';
import * as schema from '../src/store/schema/index.ts';
import { customers, projects } from '../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The cascade of a project's or customer's deletion is generated from the resource declarations
 * (issue 39 item 4): every table of the store schema that names a project or a customer row is
 * reached by it (or listed, with why, as kept), so a table added without a declaration fails here;
 * the generated plan is the one the cascade ran when it was written by hand; and on the real store
 * nothing of a deleted customer stays live.
 */

type Owner = 'project' | 'customer';

/** The owner columns of a table, read off its drizzle definition: `*_uuid`, a foreign key to the owner, or a uuid `project_id` (a project's row id). */
const ownerColumns = (t: PgTable): { owner: Owner; column: string; notNull: boolean }[] => {
  const fks = getTableConfig(t).foreignKeys.map((fk) => fk.reference());
  return Object.values(getTableColumns(t)).flatMap((c) => {
    const to = fks.find((r) => r.columns.includes(c))?.foreignTable;
    const owner: Owner | undefined =
      c.name === 'project_uuid' || to === projects || (c.name === 'project_id' && c.columnType === 'PgUUID')
        ? 'project'
        : c.name === 'customer_uuid' || to === customers
          ? 'customer'
          : undefined;
    return owner ? [{ owner, column: c.name, notNull: c.notNull }] : [];
  });
};

/**
 * The tables naming an owner that no cascade reaches: a project's column is reached by the
 * project's cascade or by its customer's (a customer's row scoped to a project, e.g. a data plane);
 * a customer's column by the customer's, or by the project's when every row names its project.
 */
const uncovered = (tables: readonly PgTable[], plan: Record<Owner, CascadeStep[]>): string[] => {
  const reached = (owner: Owner) => new Set(plan[owner].map((s) => s.table));
  const [byProject, byCustomer] = [reached('project'), reached('customer')];
  return tables.flatMap((t) => {
    const name = getTableName(t);
    if (t === projects || t === customers || name in KEPT_ON_DELETE) return [];
    const cols = ownerColumns(t);
    const projectCol = cols.find((c) => c.owner === 'project');
    const missing = cols.filter((c) =>
      c.owner === 'project'
        ? !byProject.has(name) && !byCustomer.has(name)
        : !byCustomer.has(name) && !(byProject.has(name) && projectCol?.notNull === true),
    );
    return missing.map((c) => `${name}.${c.column}`);
  });
};

const exported: unknown[] = Object.values(schema);
const TABLES = exported.filter((v): v is PgTable => is(v, PgTable));

describe('the cascade is generated from the declarations', () => {
  test('every table of the store schema with a project or customer owner column is reached by a cascade (or kept, with why)', () => {
    expect(TABLES.length).toBe(STORE_TABLES.size);
    // The detection sees the owner columns it must (a project's row id under every spelling).
    expect(TABLES.filter((t) => ownerColumns(t).length > 0).length).toBeGreaterThanOrEqual(20);
    expect(uncovered(TABLES, cascadePlan())).toEqual([]);
    for (const [table, why] of Object.entries(KEPT_ON_DELETE)) {
      const t = STORE_TABLES.get(table);
      expect([table, t !== undefined && ownerColumns(t).length > 0, why.length > 10]).toEqual([table, true, true]);
    }
  });

  test('a new table with a project (or customer) column and no declaration is reported', () => {
    const scratch = pgTable('scratch_things', {
      id: uuid('id').primaryKey(),
      projectUuid: uuid('project_uuid').references(() => projects.id),
      name: text('name'),
    });
    const loose = pgTable('scratch_accounts', { id: uuid('id').primaryKey(), customerUuid: uuid('customer_uuid').notNull() });
    expect(uncovered([...TABLES, scratch, loose], cascadePlan())).toEqual([
      'scratch_things.project_uuid',
      'scratch_accounts.customer_uuid',
    ]);
  });

  test('the generated plan covers the cascade as it was written by hand (same tables, same removal; a resource added since only adds steps)', () => {
    const shape = (steps: CascadeStep[]) => steps.map((s) => `${s.table}:${s.removal}${s.touch ? '+updated_at' : ''}`);
    const plan = cascadePlan();
    const byHand = {
      project: [
        'routes:soft-delete',
        'provider_connections:soft-delete',
        'api_keys:revoke',
        'byok_keys:revoke+updated_at',
        'user_tokens:revoke',
        'project_members:delete',
        'project_models:delete',
        'project_providers:delete',
        'project_mcp_servers:delete',
        'mcp_profiles:delete',
        'mcp_server_credentials:delete',
        'project_settings:delete',
        'budgets:delete',
        'guardrails:delete',
        'project_gateway_projects:delete',
      ],
      customer: [
        'project_gateways:soft-delete+updated_at',
        'dataplanes:soft-delete+updated_at',
        'user_tokens:revoke',
        'service_accounts:revoke',
      ],
    };
    for (const owner of ['project', 'customer'] as const) {
      expect(shape(plan[owner])).toEqual(expect.arrayContaining(byHand[owner]));
      // Each table once per owner.
      expect(new Set(plan[owner].map((s) => s.table)).size).toBe(plan[owner].length);
    }
    // Every declaration says who owns it; those with tables name tables the schema defines.
    for (const [name, d] of Object.entries(DECLARATIONS)) {
      expect([name, ['project', 'customer', 'global'].includes(d.owner)]).toEqual([name, true]);
      if ('stored' in d) for (const s of d.stored) expect([name, s.table, STORE_TABLES.has(s.table)]).toEqual([name, s.table, true]);
    }
  });
});

describe('on the store', () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(async () => {
    await tg?.stop();
  });

  test('after DeleteCustomer no row of any table its cascade reaches is live, and the user tokens say why', async () => {
    const at = { customerId: 'c-decl', projectId: 'p1' };
    await tg.must(admin('CreateCustomer'), { customerId: 'c-decl' });
    await tg.must(admin('CreateProject'), at);
    await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u-1', enterpriseContext: at });
    await tg.must(admin('CreateProviderConnection'), { ...at, name: 'c1', provider: 'echo' });
    const model = (await tg.must(admin('CreateModel'), { model: 'm-decl', provider: 'echo' })) as { model?: { id?: string } };
    await tg.must(admin('AddProjectModel'), { ...at, modelId: model.model?.id });
    await tg.must(admin('CreateRoute'), { ...at, model: 'm-decl', targets: [{ connection: 'c1', model: 'up-1' }] });
    await tg.must(admin('UpsertBudget'), { ...at, name: 'b1', limitUsd: '10', period: 'day' });
    await tg.must(admin('CreateGuardrail'), { ...at, name: 'g1', stage: 'input', kind: 'regex', pattern: 'x+', action: 'block' });
    await tg.must(admin('UpsertProjectSetting'), { ...at, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":100}' });
    await tg.must(admin('AddProjectMember'), { ...at, userId: 'u-1', role: 'member' });
    await tg.must(admin('CreateWorkspace'), { customerId: 'c-decl', workspaceId: 'ws' });
    await tg.must(admin('CreateProjectGateway'), { customerId: 'c-decl', workspaceId: 'ws', projectGatewayId: 'gw' });
    await tg.must(admin('CreateUserToken'), { ...at, workspaceId: 'ws', userId: 'u-1', organizationUnit: 'eng', role: 'developer' });
    const db = tg.gw.store.db;
    const [customer] = await db.select().from(customers).where(eq(customers.customerId, 'c-decl'));
    const [project] = await db
      .select()
      .from(projects)
      .where(and(eq(projects.customerId, 'c-decl'), eq(projects.projectId, 'p1')));
    if (!customer || !project) throw new Error('not created');
    const plan = cascadePlan();
    /** Rows of a step's table of the owner, and how many of them are still live (not deleted, soft-deleted or revoked). */
    const counts = async (owner: Owner, id: string) =>
      Promise.all(
        plan[owner].map(async (s) => {
          const t = STORE_TABLES.get(s.table);
          if (!t) throw new Error(s.table);
          const cols = getTableColumns(t);
          const ownerCol = cols[owner === 'project' ? 'projectUuid' : 'customerUuid'];
          const marker = s.removal === 'soft-delete' ? cols.deletedAt : s.removal === 'revoke' ? cols.revokedAt : undefined;
          if (!ownerCol) throw new Error(`${s.table} has no owner column`);
          const [row] = await db
            .select({
              all: sql<number>`count(*)::int`,
              live: sql<number>`count(*) filter (where ${marker ? isNull(marker) : sql`true`})::int`,
            })
            .from(t)
            .where(eq(ownerCol, id));
          return [s.table, row?.all ?? 0, row?.live ?? 0] as const;
        }),
      );
    const before = [...(await counts('project', project.id)), ...(await counts('customer', customer.id))];
    // The world above has rows in most of the tables.
    expect(before.filter(([, all]) => all > 0).length).toBeGreaterThanOrEqual(13);
    await tg.must(admin('DeleteCustomer'), { customerId: 'c-decl' });
    const after = [...(await counts('project', project.id)), ...(await counts('customer', customer.id))];
    expect(after.filter(([, , live]) => live > 0)).toEqual([]);
    // Soft-deleted and revoked rows stay on record; deleted ones are gone.
    for (const [table, all] of after)
      expect([table, all]).toEqual([
        table,
        plan.project.concat(plan.customer).find((s) => s.table === table)?.removal === 'delete'
          ? 0
          : (before.find(([t]) => t === table)?.[1] ?? 0),
      ]);
    const tokens = await db
      .select({ reason: schema.userTokens.revokedReason })
      .from(schema.userTokens)
      .where(eq(schema.userTokens.customerUuid, customer.id));
    expect(tokens.map((r) => r.reason)).toEqual(['project deleted']);
    const [gone] = await db.select().from(customers).where(eq(customers.id, customer.id));
    expect(gone?.deletedAt).toBeInstanceOf(Date);
    expect(gone?.updatedAt.getTime()).toBe(gone?.deletedAt?.getTime());
  }, 60_000);
});
