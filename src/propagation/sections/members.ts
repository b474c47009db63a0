import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { projectMembers } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The members of live projects. */
export const membersLoader = async ({ tx, select, live }: LoadContext): Promise<Pick<DocumentSections, 'projectMembers'>> => {
  const [rows] = await select([
    tx
      .select({ projectUuid: projectMembers.projectUuid, userId: projectMembers.userId })
      .from(projectMembers)
      .where(inArray(projectMembers.projectUuid, live())),
  ]);
  return { projectMembers: rows };
};
