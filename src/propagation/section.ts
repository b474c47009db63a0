import type { ConfigDocument } from '../api/config-document.ts';
import type { ProviderAdapter } from '../providers/types.ts';

/**
 * What a section's snapshot builder (src/propagation/sections/*.snapshot.ts, beside the section's
 * loader) is given, and how it is declared. build.ts knows no section: it builds the snapshot's
 * core (projects, keys, hosts) and spreads in every builder's parts, which sections/snapshots.ts
 * (generated) collects; the snapshot's types (snapshot.ts) are the core's and the parts' together.
 * A builder may read another's part or helper (e.g. the routes read the settings' fallback): each
 * is computed once per document or project (`perDocument`, `perProject`), whoever asks first.
 */

/** One document being built. */
export interface DocumentBuild {
  doc: ConfigDocument;
  getAdapter: (id: string) => ProviderAdapter | undefined;
  now: number;
}

/** One project of the document being built. */
export interface ProjectBuild {
  document: DocumentBuild;
  project: ConfigDocument['projects'][number];
}

/** A value computed once per document, whichever builder asks first. */
export const perDocument = <T>(fn: (d: DocumentBuild) => T): ((d: DocumentBuild) => T) => {
  const memo = new WeakMap<DocumentBuild, { value: T }>();
  return (d) => {
    const hit = memo.get(d);
    if (hit) return hit.value;
    const value = fn(d);
    memo.set(d, { value });
    return value;
  };
};

/** A value computed once per project of a document, whichever builder asks first. */
export const perProject = <T>(fn: (p: ProjectBuild) => T): ((p: ProjectBuild) => T) => {
  const memo = new WeakMap<ProjectBuild, { value: T }>();
  return (p) => {
    const hit = memo.get(p);
    if (hit) return hit.value;
    const value = fn(p);
    memo.set(p, { value });
    return value;
  };
};

/** Rows by the project they belong to (by its row id, never by slug). */
export const groupByProject = <T extends { projectUuid: string }>(rows: readonly T[]): ReadonlyMap<string, readonly T[]> => {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.projectUuid);
    if (list) list.push(r);
    else out.set(r.projectUuid, [r]);
  }
  return out;
};

/** A project's rows of one section: `rowsOf((doc) => doc.budgets)` gives each project its budgets. */
export const rowsOf = <T extends { projectUuid: string }>(
  section: (doc: ConfigDocument) => readonly T[] | undefined,
): ((p: ProjectBuild) => readonly T[]) => {
  const grouped = perDocument((d) => groupByProject(section(d.doc) ?? []));
  return (p) => grouped(p.document).get(p.project.id) ?? [];
};

/**
 * A section's snapshot builder: its fields of the ConfigSnapshot (`global`) and of each
 * ProjectSnapshot (`project`), each wrapped in `perDocument` / `perProject` so that a builder
 * reading another's part gets the very value the snapshot holds. Exported as `…Snapshot` and
 * checked with `satisfies SnapshotBuilder`; sections/snapshots.ts (generated) spreads the parts.
 */
export interface SnapshotBuilder {
  global?: (d: DocumentBuild) => object;
  project?: (p: ProjectBuild) => object;
}
