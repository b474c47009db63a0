import { and, asc, inArray, isNull } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { byokProviderId } from '../../core/byok.ts';
import { byokKeys } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The unrevoked BYOK keys of live projects, oldest first, unwrapped; a key of a provider no longer known is left out. */
export const byokLoader = async ({ tx, select, live, secrets }: LoadContext): Promise<Pick<DocumentSections, 'byokKeys'>> => {
  const [rows] = await select([
    tx
      .select({
        id: byokKeys.id,
        projectUuid: byokKeys.projectUuid,
        provider: byokKeys.provider,
        userId: byokKeys.scopeUserId,
        secretWrapped: byokKeys.secretWrapped,
      })
      .from(byokKeys)
      .where(and(isNull(byokKeys.revokedAt), inArray(byokKeys.projectUuid, live())))
      .orderBy(asc(byokKeys.createdAt), asc(byokKeys.id)),
  ]);
  return {
    byokKeys: rows.flatMap((k) => {
      const provider = byokProviderId(k.provider);
      return provider
        ? [{ id: k.id, projectUuid: k.projectUuid, provider, userId: k.userId, secret: secrets.unwrap(k.secretWrapped) }]
        : [];
    }),
  };
};
