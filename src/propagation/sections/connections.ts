import { and, inArray, isNull } from 'drizzle-orm';
import type { JsonObject } from '../../canonical/types.ts';
import type { DocumentSections } from '../../api/config-document.ts';
import { providerConnections } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The provider connections of live projects, their keys unwrapped (sealed again for a separate data plane). */
export const connectionsLoader = async ({
  tx,
  select,
  live,
  secrets,
  upstreamAllowPrivate,
}: LoadContext): Promise<Pick<DocumentSections, 'connections'>> => {
  const [rows] = await select([
    tx
      .select()
      .from(providerConnections)
      .where(and(isNull(providerConnections.deletedAt), inArray(providerConnections.projectUuid, live()))),
  ]);
  return {
    connections: rows.map((c) => ({
      id: c.id,
      projectUuid: c.projectUuid,
      customerId: c.customerId,
      projectId: c.projectId,
      name: c.name,
      provider: c.provider,
      baseUrl: c.baseUrl,
      apiKey: c.apiKeyWrapped ? secrets.unwrap(c.apiKeyWrapped) : null,
      options: c.options as JsonObject,
      allowPrivate: c.allowPrivate || upstreamAllowPrivate,
    })),
  };
};
