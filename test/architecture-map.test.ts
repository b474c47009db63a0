import { expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/import-graph.ts';

/**
 * The README's architecture map (the code block of "## Architecture") names every folder of
 * `src/`, one line each, and no folder that does not exist: a folder added, moved or removed fails
 * here until the map says so.
 */

const mapOf = (readme: string): string[] => {
  const section = readme.slice(readme.indexOf('\n## Architecture\n'));
  const block = /```\n(src\/\n[\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README: no code block starting with src/ in the Architecture section');
  return block.split('\n');
};

const lines = mapOf(readFileSync(join(ROOT, 'README.md'), 'utf8'));
/** The map's entries under `src/` (indented two spaces): folder name → its line. */
const named = new Map(
  lines.flatMap((l) => (/^ {2}([A-Za-z0-9_.-]+)\/ +\S/.exec(l) ? [[/^ {2}([A-Za-z0-9_.-]+)\//.exec(l)?.[1] ?? '', l] as const] : [])),
);
const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

test('the README architecture map names every folder of src/', () => {
  expect(folders.length).toBeGreaterThan(15);
  expect(folders.filter((f) => !named.has(f))).toEqual([]);
});

test('the README architecture map names no folder of src/ that does not exist', () => {
  expect(named.size).toBeGreaterThan(15);
  expect([...named.keys()].filter((n) => !folders.includes(n))).toEqual([]);
});

test('each folder has one line of its own that says what it is', () => {
  const seen = lines.filter((l) => /^ {2}[A-Za-z0-9_.-]+\//.test(l)).map((l) => /^ {2}([A-Za-z0-9_.-]+)\//.exec(l)?.[1]);
  expect(seen.length).toBe(new Set(seen).size);
  // No continuation lines: what used to be a paragraph per folder is one line.
  expect(lines.filter((l) => /^ {3,}\S/.test(l))).toEqual([]);
  for (const [name, line] of named) expect(line.replace(`  ${name}/`, '').trim().length, name).toBeGreaterThan(30);
});
