import type { GuardrailRule } from '../../governance/guardrail-scan.ts';
import {
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WINDOW_CHARS,
  type GuardrailConnection,
  isProviderKind,
  type ProviderGuardrail,
} from '../../governance/guardrail-providers.ts';
import type { ConfigDocument } from '../../api/config-document.ts';
import { guardrailsGovernance } from '../governance.ts';
import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface GuardrailsPart {
  /** Guardrails by the stage they apply to (a `both` rule is in both lists), ordered by name. */
  guardrails: { input: readonly GuardrailRule[]; output: readonly GuardrailRule[] };
  /** Provider guardrails (contract §15) by stage; absent when the project has none (the request path pays nothing). */
  guardrailProviders?: { input: readonly ProviderGuardrail[]; output: readonly ProviderGuardrail[] };
}

const guardrailRows = rowsOf((doc) => doc.guardrails);
const connectionRows = rowsOf((doc) => doc.connections);

type Row = ConfigDocument['guardrails'][number];

const providerOf = (g: Row, connections: ReadonlyMap<string, GuardrailConnection>): ProviderGuardrail | undefined => {
  if (!isProviderKind(g.kind)) return undefined;
  const p = { connectionId: g.providerConnectionId, url: g.providerUrl, options: g.providerOptions ?? {} };
  const connection = p.connectionId !== undefined ? connections.get(p.connectionId) : undefined;
  return Object.freeze({
    name: g.name,
    stage: g.stage === 'input' || g.stage === 'output' ? g.stage : 'both',
    kind: g.kind,
    action: g.action === 'flag' ? 'flag' : 'block',
    ...(p.url !== undefined ? { url: p.url } : {}),
    ...(connection ? { connection } : {}),
    ...(p.connectionId !== undefined ? { connectionId: p.connectionId } : {}),
    ...(g.authValue ? { authValue: g.authValue } : {}),
    options: Object.freeze({ ...p.options }),
    timeoutMs: g.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    failMode: g.failMode === 'open' || g.failMode === 'closed' ? g.failMode : null,
    windowChars: g.windowChars ?? DEFAULT_WINDOW_CHARS,
    allowPrivate: g.allowPrivate === true,
  });
};

const providersPart = (
  rows: readonly Row[],
  connectionList: readonly ConfigDocument['connections'][number][],
): GuardrailsPart['guardrailProviders'] => {
  if (!rows.some((r) => isProviderKind(r.kind))) return undefined;
  const connections = new Map(
    connectionList.map((c): [string, GuardrailConnection] => [
      c.name,
      Object.freeze({
        name: c.name,
        provider: c.provider,
        ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}),
        ...(c.apiKey ? { apiKey: c.apiKey } : {}),
        options: c.options,
        allowPrivate: c.allowPrivate === true,
      }),
    ]),
  );
  const all = rows.map((r) => providerOf(r, connections)).filter((g): g is ProviderGuardrail => g !== undefined);
  return Object.freeze({
    input: Object.freeze(all.filter((g) => g.stage !== 'output')),
    output: Object.freeze(all.filter((g) => g.stage !== 'input')),
  });
};

/** A project's guardrails (contract §3.2 and §15), compiled once per revision (governance.ts). */
export const guardrailsSnapshot = {
  project: perProject((p): GuardrailsPart => {
    const rows = guardrailRows(p);
    const providers = providersPart(rows, connectionRows(p));
    return {
      guardrails: guardrailsGovernance(rows.filter((r) => !isProviderKind(r.kind))),
      ...(providers ? { guardrailProviders: providers } : {}),
    };
  }),
} satisfies SnapshotBuilder;
