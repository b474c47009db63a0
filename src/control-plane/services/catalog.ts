import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { type AiModelRow, aiModels } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { mutation } from '../mutation.ts';
import { uniquely } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { Deleted, Int32, ModelId, One, Page, PageSize, PageToken, Timestamp, Uuid, ts } from '../schemas.ts';

export const CAPABILITIES = [
  'chat',
  'completion',
  'embedding',
  'image',
  'speech',
  'rerank',
  'tools',
  'vision',
  'computer_use',
  'reasoning',
  'caching',
  'json_mode',
] as const;

const Capability = t.Union(
  CAPABILITIES.map((c) => t.Literal(c)),
  { description: 'capability tag' },
);
const Price = (description: string) => t.Number({ minimum: 0, maximum: 1_000_000, description });
const ModelName = () => ModelId('public model id clients send');
const ProviderName = () => t.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$', description: 'provider id' });
const Mode = () => t.Optional(t.Union([t.String({ maxLength: 63 }), t.Null()], { description: 'modality, e.g. chat or embedding' }));

const modelFields = {
  mode: Mode(),
  capabilities: t.Optional(t.Array(Capability, { maxItems: 12, uniqueItems: true })),
  contextWindow: t.Optional(Int32({ minimum: 0, description: 'max context tokens (int32)' })),
  maxOutputTokens: t.Optional(Int32({ minimum: 0, description: 'max output tokens (int32)' })),
  inputPricePerMillion: t.Optional(Price('USD per million input tokens')),
  outputPricePerMillion: t.Optional(Price('USD per million output tokens')),
  cachedPricePerMillion: t.Optional(Price('USD per million cache-read tokens')),
  cacheWritePricePerMillion: t.Optional(Price('USD per million cache-write tokens')),
  isEnabled: t.Optional(t.Boolean()),
};

export const AIModelOut = t.Object(
  {
    id: t.String({ description: 'catalog entry UUID' }),
    model: t.String({ description: 'public model id clients send' }),
    provider: t.String(),
    mode: t.String({ description: "modality, e.g. 'chat' or 'embedding'; empty when unset" }),
    capabilities: t.Array(t.String()),
    contextWindow: Int32(),
    maxOutputTokens: Int32(),
    inputPricePerMillion: t.Number(),
    outputPricePerMillion: t.Number(),
    cachedPricePerMillion: t.Number(),
    cacheWritePricePerMillion: t.Number(),
    isEnabled: t.Boolean(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'AIModel (catalog entry)' },
);

export const modelView = (m: AiModelRow) => ({
  id: m.id,
  model: m.model,
  provider: m.provider,
  mode: m.mode ?? '',
  capabilities: m.capabilities,
  contextWindow: m.contextWindow,
  maxOutputTokens: m.maxOutputTokens,
  inputPricePerMillion: m.inputPricePerMillion,
  outputPricePerMillion: m.outputPricePerMillion,
  cachedPricePerMillion: m.cachedPricePerMillion,
  cacheWritePricePerMillion: m.cacheWritePricePerMillion,
  isEnabled: m.isEnabled,
  createdAt: ts(m.createdAt),
  updatedAt: ts(m.updatedAt),
});

export const findModel = async (db: Reader, id: string, lock?: 'share' | 'update'): Promise<AiModelRow> => {
  const q = db
    .select()
    .from(aiModels)
    .where(and(eq(aiModels.id, id), isNull(aiModels.deletedAt)))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  if (!row) throw connectError('not_found', `catalog model '${id}' not found`, 'modelId');
  return row;
};

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Catalog';

export const catalogOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'model',
    resourceId: (i, o) => o?.model.id ?? '',
    service: ADMIN,
    group: GROUP,
    name: 'CreateModel',
    summary: 'Add a model to the catalog',
    permission: 'platform_admin',
    input: t.Object({ model: ModelName(), provider: ProviderName(), ...modelFields }, { additionalProperties: false }),
    output: One('model', AIModelOut),
    handler: async (input, { tx, change }) => {
      const row = await uniquely(
        async () => {
          const [m] = await tx
              .insert(aiModels)
              .values({
                model: input.model,
                provider: input.provider,
                mode: input.mode ?? null,
                capabilities: input.capabilities ?? [],
                contextWindow: input.contextWindow ?? 0,
                maxOutputTokens: input.maxOutputTokens ?? 0,
                inputPricePerMillion: input.inputPricePerMillion ?? 0,
                outputPricePerMillion: input.outputPricePerMillion ?? 0,
                cachedPricePerMillion: input.cachedPricePerMillion ?? 0,
                cacheWritePricePerMillion: input.cacheWritePricePerMillion ?? 0,
                isEnabled: input.isEnabled ?? true,
              })
              .returning();
          return m as AiModelRow;
        },
        `catalog model '${input.model}' of provider '${input.provider}' already exists`,
        'model',
      );
      await change({ resource: 'catalog' as const, entityId: row.id });
      return { model: modelView(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetModel',
    summary: 'Get a catalog model',
    permission: 'authenticated',
    input: t.Object({ modelId: Uuid('catalog entry UUID') }, { additionalProperties: false }),
    output: One('model', AIModelOut),
    handler: async (input) => ({ model: modelView(await findModel(deps.db, input.modelId)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListModels',
    summary: 'List catalog models (oldest first; optional provider filter)',
    permission: 'authenticated',
    input: t.Object(
      { provider: t.Optional(t.String({ maxLength: 63 })), pageSize: PageSize(), pageToken: PageToken() },
      { additionalProperties: false },
    ),
    output: Page('models', AIModelOut),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(aiModels.createdAt, aiModels.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(aiModels)
        .where(and(isNull(aiModels.deletedAt), input.provider ? eq(aiModels.provider, input.provider) : undefined, k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { models: p.items.map(modelView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'model',
    resourceId: (i) => i.modelId,
    service: ADMIN,
    group: GROUP,
    name: 'UpdateModel',
    summary: 'Update a catalog model (unset fields stay unchanged)',
    permission: 'platform_admin',
    input: t.Object({ modelId: Uuid('catalog entry UUID'), ...modelFields }, { additionalProperties: false }),
    output: One('model', AIModelOut),
    handler: async (input, { tx, change }) => {
      await findModel(tx, input.modelId, 'update');
      const { modelId, ...rest } = input;
      const patch = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined && v !== null));
      const [row] = await tx
        .update(aiModels)
        .set({ ...patch, updatedAt: new Date() })
        .where(eq(aiModels.id, modelId))
        .returning();
      await change({ resource: 'catalog' as const, entityId: modelId });
      return { model: modelView(row as AiModelRow) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'model',
    resourceId: (i) => i.modelId,
    service: ADMIN,
    group: GROUP,
    name: 'DeleteModel',
    summary: 'Delete a catalog model (soft delete)',
    permission: 'platform_admin',
    input: t.Object({ modelId: Uuid('catalog entry UUID') }, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input, { tx, change }) => {
      await findModel(tx, input.modelId, 'update');
      const deletedAt = new Date();
      await tx.update(aiModels).set({ deletedAt }).where(eq(aiModels.id, input.modelId));
      await change({ resource: 'catalog' as const, entityId: input.modelId });
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
