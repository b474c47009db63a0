import { and, eq, isNull } from 'drizzle-orm';
import { CatalogOps } from '../../api/ops/catalog.ts';
import { ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { type AiModelRow, aiModels } from '../../store/schema/index.ts';
import { modelView } from '../../store/views/catalog.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { mutation, rid } from '../mutation.ts';
import { uniquely } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { CreateModel, GetModel, ListModels, UpdateModel, DeleteModel } = CatalogOps;

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

export const catalogOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateModel, {
    resourceId: (_i, o) => o?.model.id ?? '',
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
  op(GetModel, {
    handler: async (input) => ({ model: modelView(await findModel(deps.db, input.modelId)) }),
  }),
  op(ListModels, {
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
  mutation(deps, UpdateModel, {
    resourceId: (i) => rid(i.modelId),
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
  mutation(deps, DeleteModel, {
    resourceId: (i) => rid(i.modelId),
    handler: async (input, { tx, change }) => {
      await findModel(tx, input.modelId, 'update');
      const deletedAt = new Date();
      await tx.update(aiModels).set({ deletedAt }).where(eq(aiModels.id, input.modelId));
      await change({ resource: 'catalog' as const, entityId: input.modelId });
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
