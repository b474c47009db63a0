import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SettingSpec } from './setting-kinds.ts';
import { settingSpecs } from './settings.ts';

/**
 * The settings table of docs/reference/settings.md, generated from src/config/settings.ts.
 * `bun run docs:settings` rewrites it between the marker comments; test/settings.test.ts fails
 * when the committed table differs from what this renders.
 */

export const DOC_PATH = join(import.meta.dir, '..', '..', 'docs', 'reference', 'settings.md');
export const BEGIN = '<!-- settings:begin — generated from src/config/settings.ts by `bun run docs:settings`; do not edit -->';
export const END = '<!-- settings:end -->';

const code = (s: string): string => `\`${s}\``;
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const typeOf = (s: SettingSpec): string => {
  switch (s.type) {
    case 'integer':
      return s.unit ? `integer (${s.unit})` : 'integer';
    case 'size':
      return 'size (bytes)';
    case 'url':
      return 'URL';
    default:
      return s.type;
  }
};

const allowed = (s: SettingSpec): string => {
  const range =
    s.min !== undefined && s.max !== undefined ? `${code(s.min)}–${code(s.max)}` : s.min !== undefined ? `≥ ${code(s.min)}` : undefined;
  switch (s.type) {
    case 'port':
    case 'integer':
    case 'size':
      return range ?? '> 0';
    case 'duration':
      return s.max === undefined ? '> 0' : `> 0, ≤ ${code(s.max)}`;
    case 'flag':
    case 'enum':
      return (s.values ?? []).map(code).join(', ');
    case 'url':
      return (s.schemes ?? []).map((x) => code(`${x}://…`)).join(', ');
    case 'list':
      return 'comma-separated';
    case 'key':
      return 'base64 of 32 bytes';
    case 'headers':
      return code('name=value,…');
    default:
      return 'any';
  }
};

const defaultOf = (s: SettingSpec): string => (s.default !== undefined ? code(s.default) : (s.unset ?? '—'));

const meaning = (s: SettingSpec): string => {
  const notes = [
    s.secret ? 'Secret: never printed, not even in an error.' : '',
    s.readBy === 'bun' ? 'Read by Bun at process start; the gateway only checks it.' : '',
  ].filter(Boolean);
  return [`${s.description}.`, ...notes].join(' ');
};

/** The generated block, markers included. */
export const renderSettings = (): string => {
  const rows = settingSpecs().map(
    (s) => `| ${code(s.name)} | ${typeOf(s)} | ${cell(defaultOf(s))} | ${cell(allowed(s))} | ${cell(meaning(s))} |`,
  );
  return [
    BEGIN,
    '| Setting | Type | Default | Allowed | Meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Durations are written `250ms`, `10s`, `5m`, `1h`, `30d`; sizes `65536`, `512KiB`, `32MiB`, `1GB`;',
    'flags `1`/`true` or `0`/`false`. An empty value counts as unset (an empty list is the empty list).',
    END,
  ].join('\n');
};

/** `text` with its generated block replaced (the markers must be there). */
export const withSettings = (text: string): string => {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DOC_PATH}: the settings markers are missing`);
  return text.slice(0, a) + renderSettings() + text.slice(b + END.length);
};

if (import.meta.main) {
  const before = readFileSync(DOC_PATH, 'utf8');
  const after = withSettings(before);
  if (after !== before) writeFileSync(DOC_PATH, after);
  process.stdout.write(`docs:settings: ${after === before ? 'unchanged' : 'updated'} ${DOC_PATH}\n`);
}
