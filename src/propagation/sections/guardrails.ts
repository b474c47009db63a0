import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { isJsonObject } from '../../providers/json.ts';
import { guardrails } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/**
 * The guardrails of live projects, by name. A provider guardrail's credential is unwrapped here
 * (the document is plaintext in memory; seal.ts seals `authValue` and the provider's options for a
 * separate data plane).
 */
export const guardrailsLoader = async ({
  tx,
  select,
  live,
  secrets,
  upstreamAllowPrivate,
}: LoadContext): Promise<Pick<DocumentSections, 'guardrails'>> => {
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
        provider: guardrails.provider,
        authValueWrapped: guardrails.authValueWrapped,
        timeoutMs: guardrails.timeoutMs,
        failMode: guardrails.failMode,
        windowChars: guardrails.windowChars,
        allowPrivate: guardrails.allowPrivate,
      })
      .from(guardrails)
      .where(inArray(guardrails.projectUuid, live()))
      .orderBy(guardrails.name),
  ]);
  return {
    guardrails: rows.map(({ provider, authValueWrapped, timeoutMs, failMode, windowChars, allowPrivate, ...r }) =>
      provider === null
        ? r
        : {
            ...r,
            ...(provider.connectionId !== undefined ? { providerConnectionId: provider.connectionId } : {}),
            ...(provider.url !== undefined ? { providerUrl: provider.url } : {}),
            providerOptions: isJsonObject(provider.options) ? provider.options : {},
            authValue: authValueWrapped !== null ? secrets.unwrap(authValueWrapped) : null,
            timeoutMs,
            failMode,
            windowChars,
            allowPrivate: allowPrivate || upstreamAllowPrivate,
          },
    ),
  };
};
