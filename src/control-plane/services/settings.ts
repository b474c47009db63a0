import { and, asc, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { type ProjectSettingRow, projectSettings } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findProject, lockProject } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { CustomerRef, Enum, One, ProjectKey, Str, Success, Timestamp, ts } from '../schemas.ts';
import { parseSettingValue } from '../setting-values.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Project settings';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });
const SettingName = () => Enum(['global-fallback', 'rate-limit'] as const, "setting name: 'global-fallback' or 'rate-limit'");

export const SettingOut = t.Object(
  { settingName: t.String(), settingValue: t.String({ description: 'string-encoded value' }), updatedAt: Timestamp() },
  { description: 'ProjectSetting' },
);
const settingView = (s: ProjectSettingRow) => ({ settingName: s.settingName, settingValue: s.settingValue, updatedAt: ts(s.updatedAt) });
const change = (customerId: string, projectId: string, name: string) => ({ resource: 'projectSetting' as const, entityId: name, customerId, projectId });

export const settingOps = (deps: ControlDeps): OpDef[] => [
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetProjectSettings',
    summary: "A project's settings (ordered by name)",
    permission: 'project_member',
    scope,
    input: t.Object(Addr, { additionalProperties: false }),
    output: t.Object({ settings: t.Array(SettingOut) }),
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
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_setting',
    resourceId: (i) => rid(i.customerId, i.projectId, i.settingName),
    service: ADMIN,
    group: GROUP,
    name: 'UpsertProjectSetting',
    summary: 'Create or replace a project setting',
    notes: [
      'settingValue is JSON text (1-1024 characters), checked against the format of its setting and stored as given; a value that does not parse or breaks the format is invalid_argument naming settingValue.',
      '- `rate-limit`: `{"requestsPerMinute"?: int, "tokensPerMinute"?: int, "per"?: "project" | "api_key"}` — at least one limit, each a positive integer; `per` defaults to `api_key`; no other keys.',
      '- `global-fallback`: `{"targets": [{"connection": "<connection name>", "model": "<upstream model id>"}, …]}` — 1-32 targets, tried in order after every target of a route has failed retryably; no other keys.',
    ].join('\n'),
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, settingName: SettingName(), settingValue: Str(1, 1024, { description: 'string-encoded value (1-1024)' }) }, { additionalProperties: false }),
    output: One('setting', SettingOut),
    handler: async (input, { tx, change: record }) => {
      const parsed = parseSettingValue(input.settingName, input.settingValue);
      if (!parsed.ok) throw connectError('invalid_argument', `invalid field 'settingValue': not a valid '${input.settingName}' value: ${parsed.reason}`, 'settingValue');
      const now = new Date();
      const project = await lockProject(tx, input.customerId, input.projectId);
      const [row] = await tx
        .insert(projectSettings)
        .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, settingName: input.settingName, settingValue: input.settingValue, updatedAt: now })
        .onConflictDoUpdate({
          target: [projectSettings.projectUuid, projectSettings.settingName],
          set: { settingValue: input.settingValue, updatedAt: now },
        })
        .returning();
      await record(change(project.customerId, project.projectId, input.settingName));
      return { setting: settingView(row as ProjectSettingRow) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_setting',
    resourceId: (i) => rid(i.customerId, i.projectId, i.settingName),
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProjectSetting',
    summary: 'Delete a project setting (not set: not_found)',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, settingName: SettingName() }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change: record }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectSettings)
        .where(and(eq(projectSettings.projectUuid, project.id), eq(projectSettings.settingName, input.settingName)))
        .returning({ id: projectSettings.id });
      if (gone.length === 0) throw connectError('not_found', `setting '${input.settingName}' is not set in project '${project.projectId}'`, 'settingName');
      await record(change(project.customerId, project.projectId, input.settingName));
      return { success: true };
    },
  }),
];
