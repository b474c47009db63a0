import { and, inArray, isNull } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { routes } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The routes of live projects. */
export const routesLoader = async ({ tx, select, live }: LoadContext): Promise<Pick<DocumentSections, 'routes'>> => {
  const [rows] = await select([
    tx
      .select()
      .from(routes)
      .where(and(isNull(routes.deletedAt), inArray(routes.projectUuid, live()))),
  ]);
  return {
    routes: rows.map((r) => ({
      id: r.id,
      projectUuid: r.projectUuid,
      customerId: r.customerId,
      projectId: r.projectId,
      model: r.model,
      targets: r.targets,
      enabled: r.enabled,
      timeoutMs: r.timeoutMs,
      maxRetries: r.maxRetries,
      strategy: r.strategy,
    })),
  };
};
