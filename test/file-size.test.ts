import { expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import { attributesOf } from './support/git-attributes.ts';
import { ROOT } from './support/import-graph.ts';

/**
 * No hand-written source file is over 400 lines: a file that grows past it is split along a seam
 * of its own. Generated files (marked `linguist-generated` in .gitattributes, e.g. iac/src/l1.ts)
 * are exempt.
 */
const MAX_LINES = 400;
const DIRS = ['src', 'iac/provider', 'iac/src', 'bench', 'scripts', 'deploy'];

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

test(`no hand-written .ts/.tsx file of ${DIRS.join(', ')} is over ${MAX_LINES} lines`, () => {
  const files = DIRS.flatMap((d) =>
    [...new Glob('**/*.{ts,tsx}').scanSync({ cwd: `${ROOT}/${d}` })].filter((f) => !f.includes('node_modules/')).map((f) => `${d}/${f}`),
  );
  expect(files.length).toBeGreaterThan(400);
  const attrs = attributesOf(files);
  const generated = files.filter((f) => attrs.get(f)?.generated);
  // The exemption is real (the L1 constructs are far over) and stays narrow.
  expect(generated).toContain('iac/src/l1.ts');
  const over = files
    .filter((f) => !attrs.get(f)?.generated)
    .map((f) => ({ f, n: lineCount(readFileSync(`${ROOT}/${f}`, 'utf8')) }))
    .filter((x) => x.n > MAX_LINES)
    .map((x) => `${x.f}: ${x.n} lines`);
  expect(over).toEqual([]);
});
