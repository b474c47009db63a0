import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Product docs speak of the product only: no issue numbers, development sessions, or the
 * documents the product was built from ("the seed", "the contract"), which a user does not have.
 */

const ROOT = join(import.meta.dir, '..');

const productDocs = (): string[] => {
  const out = ['README.md', 'iac/README.md'].filter((f) => existsSync(join(ROOT, f)));
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const rel = join(dir, name);
      if (statSync(join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
};

const FORBIDDEN: [RegExp, string][] = [
  [/\bissues? #?\d+/i, 'an issue number'],
  [/(?<![\w&])#\d+\b/, 'an issue reference (#N)'],
  [/\bsessions? \d+/i, 'a development session'],
  [/\bthe seeds?\b|\bseeds?'s?\b(?! a demo)|\bseed docs?\b/i, 'the seed'],
  [/\bthe contract\b|\bcontract'?s? ?§|\bcontract §/i, 'the contract'],
];

/** Text outside fenced code blocks (shell comments and JSON may say anything). */
const prose = (md: string): string[] => {
  const lines: string[] = [];
  let fenced = false;
  for (const line of md.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    lines.push(fenced ? '' : line);
  }
  return lines;
};

describe('product docs', () => {
  test('the product docs are found', () => {
    const docs = productDocs();
    expect(docs).toContain('README.md');
    expect(docs).toContain('docs/deployment.md');
    expect(docs).toContain('docs/reference/management-api.md');
  });

  for (const file of productDocs()) {
    test(`${file} mentions no issue, session, seed or contract`, () => {
      const found: string[] = [];
      const text = readFileSync(join(ROOT, file), 'utf8');
      prose(text).forEach((line, i) => {
        for (const [re, what] of FORBIDDEN)
          if (re.test(line)) found.push(`${relative(ROOT, join(ROOT, file))}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
      });
      // Code blocks too, for the words a reader cannot resolve.
      text.split('\n').forEach((line, i) => {
        if (/\bissue \d+|\bcontract §|\bthe seed\b/i.test(line) && !found.some((f) => f.includes(`:${i + 1}:`)))
          found.push(`${file}:${i + 1}: in code: ${line.trim().slice(0, 120)}`);
      });
      expect(found).toEqual([]);
    });
  }

  test('relative links of the product docs point at files that exist (and at headings that exist)', () => {
    const broken: string[] = [];
    const slug = (h: string) =>
      h
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .trim()
        .replace(/ /g, '-');
    const headings = (file: string) =>
      new Set(
        readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .filter((l) => /^#{1,6} /.test(l))
          .map((l) => slug(l.replace(/^#+ /, ''))),
      );
    for (const file of productDocs()) {
      const text = prose(readFileSync(join(ROOT, file), 'utf8')).join('\n');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : join(file, '..', path);
        if (!existsSync(join(ROOT, resolved))) broken.push(`${file}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !headings(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
