import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface ByokSnapshot {
  /** Project-level keys. */
  project: ReadonlyMap<string, string>;
  /** User-scoped keys: userId → provider id → secret. */
  users: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

export interface ByokPart {
  /** BYOK keys (see pipeline/byok.ts): provider id → secret; the newest active key of each scope wins. */
  byok: ByokSnapshot;
}

const byokRows = rowsOf((doc) => doc.byokKeys);

/** BYOK keys of one project, oldest first: the newest active key of each (scope, provider) wins. */
export const byokSnapshot = {
  project: perProject((p): ByokPart => {
    const project = new Map<string, string>();
    const users = new Map<string, Map<string, string>>();
    for (const r of byokRows(p)) {
      if (r.userId === '') project.set(r.provider, r.secret);
      else {
        let m = users.get(r.userId);
        if (!m) {
          m = new Map();
          users.set(r.userId, m);
        }
        m.set(r.provider, r.secret);
      }
    }
    return { byok: Object.freeze({ project, users }) };
  }),
} satisfies SnapshotBuilder;
