import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPORT_FILES } from '../bench/lib/output.ts';
import { DASHBOARD_TEMPLATE, RULE_TEMPLATE } from '../deploy/chart-monitoring.ts';
import { README as CHART_README, VALUES as CHART_VALUES } from '../deploy/chart-values.ts';
import drizzleConfig from '../drizzle.config.ts';
import { DOCS_DIR as IAC_DOCS, renderDocs } from '../iac/scripts/gen-docs.ts';
import { L1_PATH } from '../iac/scripts/gen-l1.ts';
import { REFERENCE_DIR, REFERENCES } from '../scripts/docs-reference.ts';
import { renderRegistries } from '../scripts/gen-registries.ts';
import { DOC_PATH as SETTINGS_DOC } from '../src/config/settings-doc.ts';
import { DOC_PATH as FIELDS_DOC } from '../src/providers/field-support-doc.ts';
import { attributesOf, trackedFiles } from './support/git-attributes.ts';
import { ROOT } from './support/import-graph.ts';

/**
 * .gitattributes marks every file a generator writes `linguist-generated` (collapsed in reviews,
 * out of the language statistics), and nothing else: each generator's outputs are read from the
 * generator itself (its exported paths, or what it renders), so a generator that starts writing a
 * new file fails here until the file is marked.
 */

const rel = (abs: string): string => relative(ROOT, abs);
const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => rel(join(e.parentPath, e.name)));

const GENERATORS: Record<string, readonly string[]> = {
  'bun install': ['bun.lock'],
  'bun run db:generate': filesUnder(drizzleConfig.out ?? 'drizzle'),
  'bun run gen:registries': Object.keys(await renderRegistries()),
  'bun run docs:reference': Object.keys(REFERENCES).map((f) => rel(join(REFERENCE_DIR, f))),
  'bun run docs:settings': [rel(SETTINGS_DOC)],
  'bun run docs:fields': [rel(FIELDS_DOC)],
  'bun run chart:values': [rel(CHART_VALUES), rel(CHART_README), rel(DASHBOARD_TEMPLATE), rel(RULE_TEMPLATE)],
  'bun run iac:l1': [rel(L1_PATH)],
  'bun run iac:docs': Object.keys(renderDocs()).map((f) => rel(join(IAC_DOCS, f))),
  'bun run bench': REPORT_FILES,
};
const outputs = new Set(Object.values(GENERATORS).flat());

test('every file a generator writes is marked linguist-generated in .gitattributes', () => {
  expect(outputs.size).toBeGreaterThan(60);
  const attrs = attributesOf([...outputs]);
  const unmarked = Object.entries(GENERATORS).flatMap(([command, files]) =>
    files.filter((f) => !attrs.get(f)?.generated).map((f) => `${f} (${command})`),
  );
  expect(unmarked).toEqual([]);
});

test('no hand-written file is marked generated: every marked tracked file is a generator output', () => {
  const tracked = trackedFiles();
  const attrs = attributesOf(tracked);
  const marked = tracked.filter((f) => attrs.get(f)?.generated);
  expect(marked.length).toBeGreaterThan(60);
  expect(marked.filter((f) => !outputs.has(f))).toEqual([]);
  // Hand-written neighbours of generated files stay unmarked.
  for (const f of ['src/api/kit.ts', 'src/store/schema/projects.ts', 'iac/src/base.ts', 'docs/index.md', 'drizzle.config.ts'])
    expect(attrs.get(f)?.generated ?? false).toBe(false);
});

test("the lockfile and the migrations' schema snapshots have their textual diff turned off; migrations and code keep theirs", () => {
  const attrs = attributesOf([
    'bun.lock',
    'drizzle/meta/0000_snapshot.json',
    'drizzle/0000_init.sql',
    'iac/src/l1.ts',
    'src/api/registry.ts',
  ]);
  expect(attrs.get('bun.lock')?.noDiff).toBe(true);
  expect(attrs.get('drizzle/meta/0000_snapshot.json')?.noDiff).toBe(true);
  expect(attrs.get('drizzle/0000_init.sql')?.noDiff).toBe(false);
  expect(attrs.get('iac/src/l1.ts')?.noDiff).toBe(false);
  expect(attrs.get('src/api/registry.ts')?.noDiff).toBe(false);
});
