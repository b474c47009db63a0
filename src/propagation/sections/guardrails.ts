import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { guardrails } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The guardrails of live projects, by name. */
export const guardrailsLoader = async ({ tx, select, live }: LoadContext): Promise<Pick<DocumentSections, 'guardrails'>> => {
  const [rows] = await select([
    tx
      .select({
        id: guardrails.id,
        projectUuid: guardrails.projectUuid,
        name: guardrails.name,
        stage: guardrails.stage,
        kind: guardrails.kind,
        pattern: guardrails.pattern,
        piiTypes: guardrails.piiTypes,
        maxTokens: guardrails.maxTokens,
        action: guardrails.action,
        documents: guardrails.documents,
      })
      .from(guardrails)
      .where(inArray(guardrails.projectUuid, live()))
      .orderBy(guardrails.name),
  ]);
  return { guardrails: rows };
};
