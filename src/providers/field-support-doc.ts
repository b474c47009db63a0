import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIELD_SUPPORT } from './field-support.ts';
import { COLUMNS } from './field-support-types.ts';

/**
 * docs/client-compatibility.md's "What each family honours, maps or refuses" table, generated from
 * src/providers/field-support.ts. `bun run docs:fields` rewrites it between the marker comments;
 * test/field-support-walk.test.ts fails when the committed table differs from what this renders.
 */

export const DOC_PATH = join(import.meta.dir, '..', '..', 'docs', 'client-compatibility.md');
export const BEGIN = '<!-- field-support:begin — generated from src/providers/field-support.ts by `bun run docs:fields`; do not edit -->';
export const END = '<!-- field-support:end -->';

/** `text` with its generated block replaced (the markers must be there). */
export const withFieldSupport = (text: string): string => {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DOC_PATH}: the field-support markers are missing`);
  return `${text.slice(0, a)}${BEGIN}\n${fieldSupportTable()}\n${text.slice(b)}`;
};

const cell = (s: string): string => s.replaceAll('\n', ' ');

/** The markdown table docs/client-compatibility.md carries. */
export const fieldSupportTable = (): string => {
  const head = `| Client field | ${COLUMNS.map((c) => c.title).join(' | ')} |`;
  const rule = `|---|${COLUMNS.map(() => '---').join('|')}|`;
  const rows = FIELD_SUPPORT.map((r) => `| ${cell(r.field)} | ${COLUMNS.map((c) => cell(r.cells[c.id])).join(' | ')} |`);
  return [head, rule, ...rows].join('\n');
};

if (import.meta.main) {
  const before = readFileSync(DOC_PATH, 'utf8');
  const after = withFieldSupport(before);
  if (after !== before) writeFileSync(DOC_PATH, after);
  process.stdout.write(`docs:fields: ${after === before ? 'unchanged' : 'updated'} ${DOC_PATH}\n`);
}
