import { isNull } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { aiModels } from '../../store/schema/index.ts';
import { catalogEntry } from '../../store/views/catalog.ts';
import type { LoadContext } from '../loader.ts';

/** The model catalog: every model not deleted (not scoped: the catalog is the platform's). */
export const catalogLoader = async ({ tx, select }: LoadContext): Promise<Pick<DocumentSections, 'catalog'>> => {
  const [rows] = await select([tx.select().from(aiModels).where(isNull(aiModels.deletedAt))]);
  return { catalog: rows.map(catalogEntry) };
};
