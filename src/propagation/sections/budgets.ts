import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { budgets } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The budgets of live projects. */
export const budgetsLoader = async ({ tx, select, live }: LoadContext): Promise<Pick<DocumentSections, 'budgets'>> => {
  const [rows] = await select([
    tx
      .select({
        id: budgets.id,
        projectUuid: budgets.projectUuid,
        apiKeyId: budgets.apiKeyId,
        name: budgets.name,
        limitNanoUsd: budgets.limitNanoUsd,
        period: budgets.period,
      })
      .from(budgets)
      .where(inArray(budgets.projectUuid, live())),
  ]);
  return { budgets: rows };
};
