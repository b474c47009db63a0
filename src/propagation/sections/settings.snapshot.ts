import { settingsGovernance, type SettingsGovernance } from '../governance.ts';
import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';
import { targetResolver } from './connections.snapshot.ts';

const settingRows = rowsOf((doc) => doc.settings);

/** A project's settings, parsed once per revision (governance.ts); `global-fallback` targets resolved as a route's are. */
export const settingsSnapshot = {
  project: perProject((p): SettingsGovernance => {
    const resolve = targetResolver(p);
    return settingsGovernance(settingRows(p), (c, m) => resolve(c, m, 0, 1));
  }),
} satisfies SnapshotBuilder;
