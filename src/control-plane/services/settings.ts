import { and, asc, eq } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { checkSettingValue, SettingOps } from '../../api/ops/settings.ts';
import { connectError } from '../../core/errors.ts';
import { type ProjectSettingRow, projectSettings } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';

const { GetProjectSettings, UpsertProjectSetting, DeleteProjectSetting } = SettingOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });
const idOf = (i: { customerId?: unknown; projectId?: unknown; settingName?: unknown }) => rid(i.customerId, i.projectId, i.settingName);

const settingView = (s: ProjectSettingRow) => ({ settingName: s.settingName, settingValue: s.settingValue, updatedAt: ts(s.updatedAt) });
const change = (customerId: string, projectId: string, name: string) => ({
  resource: 'projectSetting' as const,
  entityId: name,
  customerId,
  projectId,
});

export const settingOps = (deps: ControlDeps): OpDef[] => [
  op(GetProjectSettings, {
    scope,
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const rows = await deps.db
        .select()
        .from(projectSettings)
        .where(and(eq(projectSettings.projectUuid, project.id)))
        .orderBy(asc(projectSettings.settingName));
      return { settings: rows.map(settingView) };
    },
  }),
  mutation(deps, UpsertProjectSetting, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      checkSettingValue(input.settingName, input.settingValue);
      const now = new Date();
      const project = await lockProject(tx, input.customerId, input.projectId);
      const [row] = await tx
        .insert(projectSettings)
        .values({
          projectUuid: project.id,
          customerId: project.customerId,
          projectId: project.projectId,
          settingName: input.settingName,
          settingValue: input.settingValue,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [projectSettings.projectUuid, projectSettings.settingName],
          set: { settingValue: input.settingValue, updatedAt: now },
        })
        .returning();
      await record(change(project.customerId, project.projectId, input.settingName));
      return { setting: settingView(row as ProjectSettingRow) };
    },
  }),
  mutation(deps, DeleteProjectSetting, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectSettings)
        .where(and(eq(projectSettings.projectUuid, project.id), eq(projectSettings.settingName, input.settingName)))
        .returning({ id: projectSettings.id });
      if (gone.length === 0)
        throw connectError('not_found', `setting '${input.settingName}' is not set in project '${project.projectId}'`, 'settingName');
      await record(change(project.customerId, project.projectId, input.settingName));
      return { success: true };
    },
  }),
];
