import { type ProjectBuild, perProject, rowsOf, type SnapshotBuilder } from '../section.ts';
import { type CatalogEntry, catalogOf } from './catalog.snapshot.ts';

const modelRows = rowsOf((doc) => doc.projectModels);
const providerRows = rowsOf((doc) => doc.projectProviders);

/** The providers enabled for the project (a route's target needs its connection's provider among them). */
export const providersOf = perProject((p: ProjectBuild): ReadonlySet<string> => new Set(providerRows(p).map((r) => r.providerName)));

export interface AssignmentsPart {
  /** Catalog entries assigned to the project, by public model id. */
  models: ReadonlyMap<string, CatalogEntry>;
}

/** The catalog models assigned to each project (enabled ones; the first assigned keeps a public id). */
export const assignmentsSnapshot = {
  project: perProject((p): AssignmentsPart => {
    const byId = catalogOf(p.document).byId;
    const models = new Map<string, CatalogEntry>();
    for (const pm of modelRows(p)) {
      const entry = byId.get(pm.modelId);
      if (entry?.isEnabled && !models.has(entry.model)) models.set(entry.model, entry);
    }
    return { models };
  }),
} satisfies SnapshotBuilder;
