import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const ROOT = join(import.meta.dir, '..', '..');

/** A module graph from its entry files: the repository files reached (paths relative to the root) and the packages imported. */
export interface ImportGraph {
  files: string[];
  packages: string[];
  /** Repository file → the repository files it imports (static and dynamic). */
  edges: Map<string, string[]>;
}

export const importGraph = (...entries: string[]): ImportGraph => {
  const transpiler = new Bun.Transpiler({ loader: 'ts' });
  const source = (abs: string) => readFileSync(abs, 'utf8').replace(/^#!.*/, '');
  const edges = new Map<string, string[]>();
  const packages = new Set<string>();
  const rel = (abs: string) => abs.slice(ROOT.length + 1);
  const visit = (abs: string): void => {
    const file = rel(abs);
    if (edges.has(file)) return;
    const out: string[] = [];
    edges.set(file, out);
    for (const imp of transpiler.scanImports(source(abs))) {
      if (imp.path.startsWith('.') && imp.path.endsWith('.ts')) {
        const target = resolve(dirname(abs), imp.path);
        out.push(rel(target));
        visit(target);
      } else packages.add(imp.path);
    }
  };
  for (const e of entries) visit(join(ROOT, e));
  return { files: [...edges.keys()].sort(), packages: [...packages].sort(), edges };
};

/** Every import edge `from → to` of the repository's TypeScript files under `dirs` whose target starts with one of `forbidden`. */
export const forbiddenEdges = (graph: ImportGraph, from: string, forbidden: readonly string[]): string[] =>
  [...graph.edges.entries()].filter(([f]) => f.startsWith(from)).flatMap(([f, targets]) => targets.filter((t) => forbidden.some((p) => t.startsWith(p))).map((t) => `${f} → ${t}`));
