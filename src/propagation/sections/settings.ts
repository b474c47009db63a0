import { inArray } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { projectSettings } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/** The settings of live projects, as stored (parsed when the snapshot is built: governance.ts). */
export const settingsLoader = async ({ tx, select, live }: LoadContext): Promise<Pick<DocumentSections, 'settings'>> => {
  const [rows] = await select([
    tx
      .select({ projectUuid: projectSettings.projectUuid, name: projectSettings.settingName, value: projectSettings.settingValue })
      .from(projectSettings)
      .where(inArray(projectSettings.projectUuid, live())),
  ]);
  return { settings: rows };
};
