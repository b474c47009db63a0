import { Type as t } from '@sinclair/typebox';
import { Deleted, Enum, Int32, ModelId, One, Page, PageSize, PageToken, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/** The model catalog: the models the gateway knows, with their capabilities and prices (platform admin's). */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Catalog';

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

const Capability = Enum(CAPABILITIES, 'capability tag');
const Price = (description: string) => t.Number({ minimum: 0, maximum: 1_000_000, description });
const ModelName = () => ModelId('public model id clients send');
const ProviderName = () =>
  t.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$', description: 'provider id' });
const Mode = () => t.Optional(t.Union([t.String({ maxLength: 63 }), t.Null()], { description: 'modality, e.g. chat or embedding' }));
const ModelRef = () => Uuid('catalog entry UUID');

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

export const CatalogOps = {
  CreateModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateModel',
    summary: 'Add a model to the catalog',
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'model' },
    input: t.Object({ model: ModelName(), provider: ProviderName(), ...modelFields }, { additionalProperties: false }),
    output: One('model', AIModelOut),
  }),
  GetModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetModel',
    summary: 'Get a catalog model',
    permission: 'authenticated',
    input: t.Object({ modelId: ModelRef() }, { additionalProperties: false }),
    output: One('model', AIModelOut),
  }),
  ListModels: defineOp({
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
  }),
  UpdateModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateModel',
    summary: 'Update a catalog model (unset fields stay unchanged)',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'model' },
    input: t.Object({ modelId: ModelRef(), ...modelFields }, { additionalProperties: false }),
    output: One('model', AIModelOut),
  }),
  DeleteModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteModel',
    summary: 'Delete a catalog model (soft delete)',
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'model' },
    input: t.Object({ modelId: ModelRef() }, { additionalProperties: false }),
    output: Deleted(),
  }),
};

const M = CatalogOps;
export const CatalogResources = {
  catalog: defineResource({
    owner: 'global',
    audit: 'model',
    change: { kind: 'CATALOG', entity: 'model', keepsApiKeys: true },
    /** The model catalog (models not deleted); `createdAt` as an ISO timestamp. */
    document: {
      section: 'catalog',
      row: () =>
        t.Object({
          id: t.String(),
          model: t.String(),
          provider: t.String(),
          mode: t.Union([t.String(), t.Null()]),
          capabilities: t.Array(t.String()),
          contextWindow: t.Number(),
          maxOutputTokens: t.Number(),
          inputPricePerMillion: t.Number(),
          outputPricePerMillion: t.Number(),
          cachedPricePerMillion: t.Number(),
          cacheWritePricePerMillion: t.Number(),
          isEnabled: t.Boolean(),
          createdAt: t.String(),
        }),
    },
    terraform: {
      type: 'gateway_model',
      description: 'A catalog model (AIModel).',
      create: M.CreateModel,
      get: M.GetModel,
      update: M.UpdateModel,
      delete: M.DeleteModel,
      envelope: 'model',
      idField: 'modelId',
      args: [
        { api: 'model', update: true },
        { api: 'provider', tf: 'provider_name', update: true },
        { api: 'mode', update: true },
        { api: 'capabilities', update: true },
        { api: 'contextWindow', update: true },
        { api: 'maxOutputTokens', update: true },
        { api: 'inputPricePerMillion', update: true },
        { api: 'outputPricePerMillion', update: true },
        { api: 'cachedPricePerMillion', update: true },
        { api: 'cacheWritePricePerMillion', update: true },
        { api: 'isEnabled', update: true },
      ],
    },
  }),
};
