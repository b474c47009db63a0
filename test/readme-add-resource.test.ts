import { expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRegistries } from '../scripts/gen-registries.ts';
import { DECLARATIONS } from '../src/api/index.ts';
import type { StoredDecl } from '../src/api/resource.ts';

/**
 * The README's "How to add a resource" (issue 39 item 4) stays true: it names every file a new
 * propagated resource touches (the count it states is the list's length), each named file exists
 * or, for the resource's own files, follows a pattern the existing resources follow and the
 * generator reads; every generated registry is named; and the files it says need no edit (the
 * snapshot's build and types, the cascade) name no resource.
 */

const ROOT = join(import.meta.dir, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = (() => {
  const start = README.indexOf('### How to add a resource\n');
  const end = README.indexOf('\n### ', start + 1);
  if (start < 0 || end < 0) throw new Error('README has no "How to add a resource" section');
  return README.slice(start, end);
})();
const listed = [...section.matchAll(/^\d+\. \*\*`([^`]+)`\*\*/gm)].map((m) => m[1] ?? '');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const filesOf = (dir: string, suffix = '.ts'): string[] => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(suffix));

test('the count the section states is the number of files it lists, each once', () => {
  const stated = /touches (\d+) files by hand/.exec(section)?.[1];
  expect(Number(stated)).toBe(listed.length);
  expect(new Set(listed).size).toBe(listed.length);
  expect(listed.length).toBeGreaterThanOrEqual(5);
});

/** How each of the resource's own files (named for `widget`) is recognised among the existing resources'. */
const PATTERNS: Record<string, { dir: string; suffix?: string; holds: RegExp }> = {
  'src/api/ops/widgets.ts': { dir: 'src/api/ops', holds: /^export const \w+Resources = \{[\s\S]*defineResource\(\{\s*owner: '/m },
  'src/store/schema/widgets.ts': { dir: 'src/store/schema', holds: /pgTable\(/ },
  'src/control-plane/services/widgets.ts': { dir: 'src/control-plane/services', holds: /^export const \w+Ops = \(deps: ControlDeps/m },
  'src/propagation/sections/widgets.ts': { dir: 'src/propagation/sections', holds: /^export const \w+Loader = async/m },
  'src/propagation/sections/widgets.snapshot.ts': {
    dir: 'src/propagation/sections',
    suffix: '.snapshot.ts',
    holds: /^export const \w+Snapshot = \{[\s\S]*satisfies SnapshotBuilder/m,
  },
};

test("each listed file exists, or is the resource's own file of a kind the existing resources have", () => {
  for (const path of listed) {
    const pattern = PATTERNS[path];
    if (!pattern) {
      expect([path, existsSync(join(ROOT, path))]).toEqual([path, true]);
      continue;
    }
    const matching = filesOf(pattern.dir, pattern.suffix).filter((f) => pattern.holds.test(read(`${pattern.dir}/${f}`)));
    expect([path, matching.length > 0]).toEqual([path, true]);
  }
  // Every pattern is listed (a kind of file dropped from the list fails here).
  expect(Object.keys(PATTERNS).filter((p) => !listed.includes(p))).toEqual([]);
});

test('every loader has its snapshot module beside it (and the other way round), and every builder is in the generated list', () => {
  const dir = 'src/propagation/sections';
  const snapshots = filesOf(dir, '.snapshot.ts');
  const loaders = filesOf(dir).filter((f) => /^export const \w+Loader = /m.test(read(`${dir}/${f}`)));
  expect(loaders.length).toBeGreaterThanOrEqual(10);
  expect(snapshots.map((f) => f.replace('.snapshot.ts', '.ts')).sort()).toEqual(loaders.sort());
  const index = read(`${dir}/snapshots.ts`);
  for (const f of snapshots) {
    const builds = /^export const \w+Snapshot = /m.test(read(`${dir}/${f}`));
    expect([f, index.includes(`from './${f}'`)]).toEqual([f, builds]);
  }
});

test('every generated registry is named in the section, with the command that writes it', async () => {
  expect(section).toContain('bun run gen:registries');
  for (const path of Object.keys(await renderRegistries())) expect([path, section.includes(`\`${path}\``)]).toEqual([path, true]);
  for (const generated of ['docs/reference/management-api.md', 'iac/src/l1.ts', 'iac/docs/README.md', 'drizzle/meta/_journal.json']) {
    expect([generated, section.includes(`\`${generated}\``), existsSync(join(ROOT, generated))]).toEqual([generated, true, true]);
  }
  const stated = /and (\d+) generated ones/.exec(section)?.[1];
  const named = new Set(
    [...section.slice(section.indexOf('Then run')).matchAll(/`((?:src|docs|iac|drizzle)\/[^`]+\.(?:ts|md|sql|json))`/g)].map((m) => m[1]),
  );
  // The hooks and the docs' examples are named as optional edits, not generated files.
  for (const optional of ['iac/provider/hooks.ts', 'iac/scripts/gen-docs.ts']) named.delete(optional);
  expect(named.size).toBe(Number(stated));
});

test('the files the section says need no edit per resource name no section and no table', () => {
  const sections = Object.values(DECLARATIONS).flatMap((d): string[] => ('document' in d ? [d.document.section] : []));
  const tables = Object.values(DECLARATIONS).flatMap((d): string[] => ('stored' in d ? d.stored.map((s: StoredDecl) => s.table) : []));
  expect(sections.length).toBeGreaterThan(10);
  const build = read('src/propagation/build.ts');
  const snapshot = read('src/propagation/snapshot.ts');
  for (const s of sections) expect([s, build.includes(`doc.${s}`), snapshot.includes(`doc.${s}`)]).toEqual([s, false, false]);
  const cascade = read('src/control-plane/cascade.ts');
  for (const t of tables) expect([t, cascade.includes(`'${t}'`)]).toEqual([t, false]);
  expect(section).toContain('`src/propagation/build.ts`');
  expect(section).toContain('`src/propagation/snapshot.ts`');
  expect(section).toContain('`src/control-plane/cascade.ts`');
});
