import { INFERENCE_TAG } from '../../src/api/inference-endpoints.ts';
import { sql } from 'drizzle-orm';
import { admin, apikeyOp, type TestGateway } from '../support/gateway.ts';
import type { Fx } from './op-table.ts';

export type Body = Record<string, unknown>;
export interface Res {
  status: number;
  body: Body;
}

export const snakeCase = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The same body with every declared property name in snake_case (map keys untouched). */
export const toSnake = (v: unknown, mapKeys = new Set(['labels', 'context', 'options'])): unknown => {
  if (Array.isArray(v)) return v.map((x) => toSnake(x, mapKeys));
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v as Body).map(([k, x]) => [snakeCase(k), mapKeys.has(k) ? x : toSnake(x, mapKeys)]));
};

/** Sets `a.b.0.c` in a deep copy of body. */
export const setPath = (body: Body, path: string, value: unknown, defaults: Record<string, Body> = {}): Body => {
  const out = structuredClone(body);
  const parts = path.split('.');
  let cur: Record<string, unknown> | unknown[] = out;
  for (let i = 0; i < parts.length - 1; i++) {
    const k = parts[i] as string;
    const next = (cur as Record<string, unknown>)[k];
    if (next === undefined || next === null)
      (cur as Record<string, unknown>)[k] = structuredClone(defaults[parts.slice(0, i + 1).join('.')] ?? {});
    cur = (cur as Record<string, unknown>)[k] as Record<string, unknown>;
  }
  (cur as Record<string, unknown>)[parts[parts.length - 1] as string] = value;
  return out;
};

/** A schema validation error naming the field. */
export const isInvalid = (r: Res, field?: string): boolean =>
  r.status === 400 && r.body.code === 'invalid_argument' && (field === undefined || String(r.body.message).includes(`'${field}`));

/**
 * A digest of every table of the store: row count and an md5 over the rows' text. Compared before
 * and after rejected requests to prove nothing was stored. The audit tables are left out: a refused
 * state-changing call is audited by design (one refusal entry each; test/audit-path.test.ts checks
 * that and nothing else is written).
 */
export const tableDigest = async (tg: TestGateway): Promise<Record<string, string>> => {
  const db = tg.gw.store.db;
  const q = async (text: ReturnType<typeof sql>) => {
    const r = (await db.execute(text)) as unknown;
    return (Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as Record<string, unknown>[];
  };
  const tables = (
    await q(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`)
  )
    .map((r) => String(r.table_name))
    .filter((t) => !t.startsWith('audit_'));
  const parts = tables.map(
    (t) => `select '${t}' as t, count(*)::text as n, coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as h from "${t}" x`,
  );
  const rows = await q(sql.raw(parts.join(' union all ')));
  return Object.fromEntries(rows.map((r) => [String(r.t), `${r.n}:${r.h}`]));
};

/** A live fixture: customer, project, model, workspace, data plane, gateway, connection, route, key. */
export const liveFixture = async (tg: TestGateway, customerId = 'acme', projectId = 'web'): Promise<Fx> => {
  const must = tg.must;
  await must(admin('CreateCustomer'), { customerId, name: 'Acme' });
  await must(admin('CreateProject'), { customerId, projectId });
  const model = (await must(admin('CreateModel'), { model: `fx-${customerId}`, provider: 'echo', capabilities: ['chat'] })) as {
    model: { id: string };
  };
  await must(admin('AddProjectModel'), { customerId, projectId, modelId: model.model.id });
  const ws = (await must(admin('CreateWorkspace'), { customerId, workspaceId: 'ws1' })) as { workspace: { id: string } };
  const dp = (await must(admin('CreateDataplane'), { customerId, dataplaneId: 'dp1' })) as { dataplane: { id: string } };
  const gw = (await must(admin('CreateProjectGateway'), { customerId, workspaceId: 'ws1', projectGatewayId: 'gw1' })) as {
    projectGateway: { id: string };
  };
  await must(admin('AttachProjectGatewayProject'), { id: gw.projectGateway.id, projectId });
  await must(admin('CreateProviderConnection'), { customerId, projectId, name: 'conn1', provider: 'echo' });
  await must(admin('CreateRoute'), { customerId, projectId, model: `fx-${customerId}`, targets: [{ connection: 'conn1', model: 'echo' }] });
  const key = (await must(apikeyOp('CreateApiKey'), { name: 'fx', userId: 'u', enterpriseContext: { customerId, projectId } })) as {
    id: string;
  };
  return {
    customerId,
    projectId,
    modelId: model.model.id,
    workspaceUuid: ws.workspace.id,
    dataplaneUuid: dp.dataplane.id,
    workspaceSlug: 'ws1',
    gatewayUuid: gw.projectGateway.id,
    connection: 'conn1',
    routeModel: `fx-${customerId}`,
    apiKeyId: key.id,
  };
};

/** The operation paths the server documents in /openapi/json, with their request schemas. */
export const documentedOps = async (
  tg: TestGateway,
): Promise<Map<string, { body: Body; permission: string; description: string; response: Body }>> => {
  const spec = (await (await fetch(`${tg.adminUrl}/openapi/json`)).json()) as { paths: Record<string, { post?: Body }> };
  const out = new Map<string, { body: Body; permission: string; description: string; response: Body }>();
  for (const [path, item] of Object.entries(spec.paths)) {
    const post = item.post as
      | {
          requestBody?: { content: Record<string, { schema: Body }> };
          'x-permission'?: string;
          description?: string;
          responses?: Record<string, { content?: Record<string, { schema: Body }> }>;
          tags?: string[];
        }
      | undefined;
    // The inference listener's endpoints are listed in the same document (api/inference-endpoints.ts): not operations.
    if (!post || post.tags?.includes(INFERENCE_TAG)) continue;
    out.set(path, {
      body: post.requestBody?.content['application/json']?.schema ?? {},
      permission: post['x-permission'] ?? '',
      description: post.description ?? '',
      response: post.responses?.['200']?.content?.['application/json']?.schema ?? {},
    });
  }
  return out;
};
