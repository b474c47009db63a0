import { Type as t } from '@sinclair/typebox';
import { connectError } from '../../core/errors.ts';
import { parseSettingValue, type SettingName } from '../../governance/setting-values.ts';
import { CustomerRef, Enum, One, ProjectKey, Str, Success, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource, reqText } from '../resource.ts';

/** Project settings: `rate-limit`, `global-fallback`, `trace-content`, `record-retention`, `response-cache`, `circuit-breaker` and `mid-stream-fallback`, JSON text in the formats of governance/setting-values.ts. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Project settings';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };

export const SETTING_NAMES = [
  'circuit-breaker',
  'global-fallback',
  'mid-stream-fallback',
  'rate-limit',
  'record-retention',
  'response-cache',
  'trace-content',
] as const satisfies readonly SettingName[];
const SettingNameField = () =>
  Enum(
    SETTING_NAMES,
    "setting name: 'circuit-breaker', 'global-fallback', 'mid-stream-fallback', 'rate-limit', 'record-retention', 'response-cache' or 'trace-content'",
  );

export const SettingOut = t.Object(
  { settingName: t.String(), settingValue: t.String({ description: 'string-encoded value' }), updatedAt: Timestamp() },
  { description: 'ProjectSetting' },
);

/**
 * A setting's value against the format of its setting (the management API and the Terraform
 * provider's plan-time check run this same function); throws `invalid_argument` naming settingValue.
 */
export const checkSettingValue = (settingName: SettingName, settingValue: string): void => {
  const parsed = parseSettingValue(settingName, settingValue);
  if (!parsed.ok)
    throw connectError(
      'invalid_argument',
      `invalid field 'settingValue': not a valid '${settingName}' value: ${parsed.reason}`,
      'settingValue',
    );
};

export const SettingOps = {
  GetProjectSettings: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetProjectSettings',
    summary: "A project's settings (ordered by name)",
    permission: 'project_member',
    input: t.Object(Addr, { additionalProperties: false }),
    output: t.Object({ settings: t.Array(SettingOut) }),
  }),
  UpsertProjectSetting: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpsertProjectSetting',
    summary: 'Create or replace a project setting',
    notes: [
      'settingValue is JSON text (1-1024 characters), checked against the format of its setting and stored as given; a value that does not parse or breaks the format is invalid_argument naming settingValue.',
      '- `rate-limit`: `{"requestsPerMinute"?: int, "tokensPerMinute"?: int, "per"?: "project" | "api_key"}` — at least one limit, each a positive integer; `per` defaults to `api_key`; no other keys.',
      '- `global-fallback`: `{"targets": [{"connection": "<connection name>", "model": "<upstream model id>"}, …]}` — 1-32 targets, tried in order after every target of a route has failed retryably; no other keys.',
      "- `trace-content`: `true` or `false` (default) — whether prompt and completion text go on the project's spans.",
      '- `record-retention`: `{"bodies": "full" | "truncated" | "none", "maxBodyBytes"?: int, "days"?: int}` — `none` stores no body, `truncated` cuts each body at `maxBodyBytes` (default 4096), `days` purges records and their bodies (and stored Responses) older than that; default full bodies, kept forever.',
      '- `response-cache`: `{"mode": "exact", "ttlSeconds": int (1..604800), "scope"?: "project" | "api_key"}` — answers cached for that long, shared by the project\'s keys (`project`, the default) or per key (`api_key`); absent: no cache (docs/client-compatibility.md, "Response cache").',
      '- `circuit-breaker`: `{"failures"?: int (0..1000, default 5), "windowSeconds"?: int (1..3600, default 30), "openSeconds"?: int (1..3600, default 30)}` — a target (connection × upstream model) failing `failures` times in `windowSeconds` (5xx, time-out, connection error) gets no request for `openSeconds`, then one probe; `{"failures": 0}` turns the breakers off; absent: on with the defaults (docs/resilience.md).',
      "- `mid-stream-fallback`: `true` or `false` (default) — a stream that breaks after part of the answer reached the client is continued by the route's next target, given the text so far as an assistant prefix, in the same client stream; the record has both attempts and the sum of their usage (docs/resilience.md).",
    ].join('\n'),
    permission: 'project_admin',
    mutates: { action: 'UPDATE', resource: 'project_setting' },
    input: t.Object(
      { ...Addr, settingName: SettingNameField(), settingValue: Str(1, 1024, { description: 'string-encoded value (1-1024)' }) },
      { additionalProperties: false },
    ),
    output: One('setting', SettingOut),
  }),
  DeleteProjectSetting: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProjectSetting',
    summary: 'Delete a project setting (not set: not_found)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_setting' },
    input: t.Object({ ...Addr, settingName: SettingNameField() }, { additionalProperties: false }),
    output: Success(),
  }),
};

const S = SettingOps;
export const SettingResources = {
  projectSetting: defineResource({
    owner: 'project',
    audit: 'project_setting',
    stored: [{ table: 'project_settings', removal: 'delete' }],
    change: { kind: 'PROJECT_SETTING', entity: 'project_setting', keepsApiKeys: true },
    /** Project settings (`rate-limit`, `global-fallback`, …) as the JSON text stored. */
    document: { section: 'settings', row: () => t.Object({ projectUuid: t.String(), name: t.String(), value: t.String() }) },
    terraform: {
      type: 'gateway_project_setting',
      description: "A project setting (setting_name lists the names; the value is JSON text in the setting's format).",
      create: S.UpsertProjectSetting,
      get: S.GetProjectSettings,
      update: S.UpsertProjectSetting,
      delete: S.DeleteProjectSetting,
      envelope: 'setting',
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'settingName' }],
      args: [{ api: 'settingValue', update: true }],
      check: (r) => {
        const name = SETTING_NAMES.find((n) => n === r.settingName);
        const value = reqText(r.settingValue);
        if (name && value !== null) checkSettingValue(name, value);
      },
    },
  }),
};
