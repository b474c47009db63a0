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
  [...graph.edges.entries()]
    .filter(([f]) => f.startsWith(from))
    .flatMap(([f, targets]) => targets.filter((t) => forbidden.some((p) => t.startsWith(p))).map((t) => `${f} → ${t}`));

/** `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`, type-only ones included. */
const IMPORT_RE =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*${}\s,]+?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * The module graph with type-only imports counted (`import type`, `export type … from`): the
 * coupling a reader follows, which `importGraph` (what Bun loads) does not show.
 */
export const typeAwareGraph = (...entries: string[]): ImportGraph => {
  const edges = new Map<string, string[]>();
  const packages = new Set<string>();
  const rel = (abs: string) => abs.slice(ROOT.length + 1);
  const visit = (abs: string): void => {
    const file = rel(abs);
    if (edges.has(file)) return;
    const out: string[] = [];
    edges.set(file, out);
    const text = readFileSync(abs, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    for (const m of text.matchAll(IMPORT_RE)) {
      const path = m[1] ?? m[2];
      if (!path) continue;
      if (path.startsWith('.') && path.endsWith('.ts')) {
        const target = resolve(dirname(abs), path);
        if (!out.includes(rel(target))) out.push(rel(target));
        visit(target);
      } else packages.add(path);
    }
  };
  for (const e of entries) visit(join(ROOT, e));
  return { files: [...edges.keys()].sort(), packages: [...packages].sort(), edges };
};

/** The strongly connected components of more than one file (import cycles), largest first (Tarjan). */
export const importCycles = (graph: ImportGraph): string[][] => {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.edges.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
        on.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.edges.keys()) if (!idx.has(v)) strong(v);
  return out.sort((a, b) => b.length - a.length);
};
