import { type A2aAgentConfig, EMPTY_A2A } from '../../a2a/config.ts';
import { perDocument, perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface A2aPart {
  /** The A2A agents assigned to the project, by agentId (src/a2a/config.ts). */
  a2aAgents: ReadonlyMap<string, A2aAgentConfig>;
}

/** The pinned card's name (validated when pinned; the agent id should a document carry something else). */
const nameOf = (card: string, fallback: string): string => {
  try {
    const parsed: unknown = JSON.parse(card);
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed && typeof parsed.name === 'string' ? parsed.name : fallback;
  } catch {
    return fallback;
  }
};

const isAuthType = (v: string): v is A2aAgentConfig['authType'] => v === 'none' || v === 'bearer' || v === 'header';

/** The catalog agents of the document, by agentId (an unknown auth type leaves the agent out). */
const catalogOf = perDocument(({ doc }): ReadonlyMap<string, A2aAgentConfig> => {
  const out = new Map<string, A2aAgentConfig>();
  for (const a of doc.a2aAgents ?? []) {
    const authType = a.authType;
    if (!isAuthType(authType)) continue;
    out.set(a.agentId, Object.freeze({ ...a, authType, name: nameOf(a.card, a.agentId) }));
  }
  return out;
});

const assignedRows = rowsOf((doc) => doc.projectA2aAgents);

/** The A2A sections (contract §12), per project: the assigned agents present in the catalog. */
export const a2aSnapshot = {
  project: perProject((p): A2aPart => {
    const rows = assignedRows(p);
    if (rows.length === 0) return { a2aAgents: EMPTY_A2A };
    const catalog = catalogOf(p.document);
    const agents = new Map<string, A2aAgentConfig>();
    for (const r of rows) {
      const a = catalog.get(r.agentId);
      if (a) agents.set(r.agentId, a);
    }
    return { a2aAgents: agents };
  }),
} satisfies SnapshotBuilder;
