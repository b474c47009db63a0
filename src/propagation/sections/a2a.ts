import { inArray, isNull } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { a2aAgents, projectA2aAgents } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/**
 * The document's A2A sections (contract §12): the assignments of live projects, and the catalog
 * agents some of them use — with the pinned card, its hash and the upstream credential (unwrapped
 * here; seal.ts seals `authValue` for a separate data plane). A data plane never receives an agent
 * no project of its document is assigned.
 */
export const a2aLoader = async ({
  tx,
  select,
  live,
  secrets,
  upstreamAllowPrivate,
}: LoadContext): Promise<Pick<DocumentSections, 'a2aAgents' | 'projectA2aAgents'>> => {
  const [catalog, assignments] = await select([
    tx.select().from(a2aAgents).where(isNull(a2aAgents.deletedAt)).orderBy(a2aAgents.agentId),
    tx
      .select({ projectUuid: projectA2aAgents.projectUuid, agentId: projectA2aAgents.agentId })
      .from(projectA2aAgents)
      .where(inArray(projectA2aAgents.projectUuid, live()))
      .orderBy(projectA2aAgents.agentId),
  ]);
  const known = new Set(catalog.map((a) => a.agentId));
  const assigned = assignments.filter((a) => known.has(a.agentId));
  const used = new Set(assigned.map((a) => a.agentId));
  return {
    projectA2aAgents: assigned,
    a2aAgents: catalog
      .filter((a) => used.has(a.agentId))
      .map((a) => ({
        agentId: a.agentId,
        cardUrl: a.cardUrl,
        card: a.card,
        cardSha256: a.cardSha256,
        rpcUrl: a.rpcUrl,
        authType: a.authType,
        authHeader: a.authHeader,
        authValue: a.authValueWrapped ? secrets.unwrap(a.authValueWrapped) : null,
        allowPrivate: a.allowPrivate || upstreamAllowPrivate,
      })),
  };
};
