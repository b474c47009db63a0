import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { projectModels, projectProviders } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The models and providers assigned to live projects (MCP server assignments filter the MCP sections: mcp.ts). */
export const assignmentsLoader = async ({
  tx,
  select,
  live,
}: LoadContext): Promise<Pick<DocumentSections, 'projectModels' | 'projectProviders'>> => {
  const [models, providers] = await select([
    tx.select().from(projectModels).where(inArray(projectModels.projectUuid, live())),
    tx.select().from(projectProviders).where(inArray(projectProviders.projectUuid, live())),
  ]);
  return {
    projectModels: models.map((r) => ({ projectUuid: r.projectUuid, modelId: r.modelId })),
    projectProviders: providers.map((r) => ({ projectUuid: r.projectUuid, providerName: r.providerName })),
  };
};
