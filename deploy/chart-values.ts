import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitoringTemplates } from './chart-monitoring.ts';
import type { SettingSpec } from '../src/config/setting-kinds.ts';
import { settingSpecs } from '../src/config/settings.ts';

/**
 * Every gateway setting is a value of the Helm chart: `bun run chart:values` writes the `settings`
 * and `secretSettings` blocks of deploy/helm/gateway/values.yaml and the settings table of its
 * README.md from src/config/settings.ts (the one declaration), and the monitoring templates from the
 * shipped dashboard and alert rules (chart-monitoring.ts); test/chart.test.ts fails when any is stale.
 */

export const CHART = join(import.meta.dir, 'helm', 'gateway');
export const VALUES = join(CHART, 'values.yaml');
export const README = join(CHART, 'README.md');
const BEGIN_VALUES = '# settings:begin — generated from src/config/settings.ts by `bun run chart:values`; do not edit by hand';
const END_VALUES = '# settings:end';
const BEGIN_README = '<!-- settings:begin — generated from src/config/settings.ts by `bun run chart:values`; do not edit -->';
const END_README = '<!-- settings:end -->';

/** Where the chart's value differs from the gateway's own default, and why. */
export const CHART_DEFAULTS: Record<string, { value: string; why: string }> = {
  GATEWAY_HOST: { value: '0.0.0.0', why: 'a pod listens on all its interfaces' },
  GATEWAY_METRICS_HOST: { value: '0.0.0.0', why: "the cluster's Prometheus scrapes the pod's metrics port" },
  GATEWAY_DATA_DIR: {
    value: '/data',
    why: 'an emptyDir (the root file system is read-only): record spool and pulled-config cache of data planes',
  },
  GATEWAY_DEMO: { value: '0', why: 'never a demo in a cluster' },
  GATEWAY_MIGRATE: { value: '0', why: 'the migrations Job applies them once per upgrade' },
  BUN_CONFIG_MAX_HTTP_REQUESTS: { value: '2048', why: 'as `bun run start` sets it' },
  BUN_JSC_forceRAMSize: {
    value: '',
    why: "left empty, each pod gets its container's memory limit (downward API, `resources.limits.memory`)",
  },
};

/** Secret settings data planes receive too (they hold no database and no KEK). */
export const DATA_PLANE_SECRETS = new Set(['REDIS_URL']);
/** Secret settings the chart refuses to render without (the management plane runs on PostgreSQL). */
export const REQUIRED_SECRETS = new Set(['DATABASE_URL', 'GATEWAY_KEK']);

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const gatewayDefault = (s: SettingSpec): string => (s.default !== undefined ? s.default : (s.unset ?? 'unset'));

export const renderValuesBlock = (): string => {
  const specs = settingSpecs();
  const plain = specs.filter((s) => !s.secret);
  const secret = specs.filter((s) => s.secret);
  const lines = [
    BEGIN_VALUES,
    '# Every non-secret setting of the gateway (docs/reference/settings.md), as environment variables of every',
    '# gateway container; "" leaves it unset (the gateway default applies). Data planes may override',
    '# any of them in dataPlanes[].settings.',
    'settings:',
  ];
  for (const s of plain) {
    const chart = CHART_DEFAULTS[s.name];
    lines.push(
      `  # ${oneLine(s.description)} (${s.type}; gateway default: ${oneLine(gatewayDefault(s))}${chart ? `; chart: ${chart.why}` : ''})`,
    );
    lines.push(`  ${s.name}: ${JSON.stringify(chart ? chart.value : (s.default ?? ''))}`);
  }
  lines.push('# Secret settings: `value` (stored in a Secret the chart makes) or `existingSecret` (+ `key`).');
  lines.push('secretSettings:');
  for (const s of secret) {
    const notes = [
      REQUIRED_SECRETS.has(s.name) ? 'required' : '',
      DATA_PLANE_SECRETS.has(s.name) ? 'data planes get it too' : 'management plane only',
    ]
      .filter(Boolean)
      .join('; ');
    lines.push(`  # ${oneLine(s.description)} (${notes})`);
    lines.push(`  ${s.name}: { value: "", existingSecret: "", key: ${s.name} }`);
  }
  lines.push(END_VALUES);
  return lines.join('\n');
};

const cell = (s: string): string => oneLine(s).replace(/\|/g, '\\|');

export const renderReadmeTable = (): string => {
  const rows = settingSpecs().map((s) => {
    const chart = CHART_DEFAULTS[s.name];
    const key = s.secret ? `secretSettings.${s.name}` : `settings.${s.name}`;
    const def = s.secret
      ? '—'
      : chart
        ? chart.value === ''
          ? chart.why
          : `\`${chart.value}\` (${chart.why})`
        : s.default !== undefined
          ? `\`${s.default}\``
          : 'unset';
    const who = s.secret ? (DATA_PLANE_SECRETS.has(s.name) ? 'all' : 'management') : 'all';
    return `| \`${key}\` | ${s.type}${s.secret ? ', secret' : ''} | ${cell(def)} | ${who} | ${cell(s.description)} |`;
  });
  return [BEGIN_README, '| Value | Type | Chart default | Pods | Meaning |', '|---|---|---|---|---|', ...rows, END_README].join('\n');
};

const between = (text: string, begin: string, end: string, block: string, file: string): string => {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${file}: the settings markers are missing`);
  return text.slice(0, a) + block + text.slice(b + end.length);
};

export const withValues = (text: string): string => between(text, BEGIN_VALUES, END_VALUES, renderValuesBlock(), VALUES);
export const withReadme = (text: string): string => between(text, BEGIN_README, END_README, renderReadmeTable(), README);

if (import.meta.main) {
  for (const [file, update] of [
    [VALUES, withValues],
    [README, withReadme],
  ] as const) {
    const before = readFileSync(file, 'utf8');
    const after = update(before);
    if (after !== before) writeFileSync(file, after);
    process.stdout.write(`chart:values: ${after === before ? 'unchanged' : 'updated'} ${file}\n`);
  }
  for (const [file, text] of Object.entries(monitoringTemplates())) {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (text !== before) writeFileSync(file, text);
    process.stdout.write(`chart:values: ${text === before ? 'unchanged' : 'updated'} ${file}\n`);
  }
}
