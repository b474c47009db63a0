import { expect, test } from 'bun:test';
import { Glob } from 'bun';
import { forbiddenEdges, type ImportGraph, importCycles, importGraph, ROOT, typeAwareGraph } from './support/import-graph.ts';

/**
 * The import rules of architecture.md over the whole module graph (static and dynamic imports of
 * every source file), read twice: as Bun loads it (value imports) and as a reader follows it (type
 * imports counted too). A layer that breaks one fails here with the offending edges listed.
 */
const SOURCES = ['src', 'iac/provider', 'iac/src', 'iac/scripts'].flatMap((d) =>
  [...new Glob('**/*.ts').scanSync(`${ROOT}/${d}`)].filter((f) => !f.endsWith('.test.ts')).map((f) => `${d}/${f}`),
);

interface Rule {
  from: string;
  /** What it may import (prefixes); anything else of the repository is a violation. */
  only?: readonly string[];
  /** What it must not import (prefixes). */
  never?: readonly string[];
  why: string;
}

const RULES: Rule[] = [
  {
    from: 'src/core/',
    only: ['src/core/', 'src/canonical/', 'src/config/'],
    why: 'core is framework-free: errors, ids, shared interfaces',
  },
  { from: 'src/config/', only: ['src/config/', 'src/core/'], why: 'settings are declared once and import no layer' },
  { from: 'src/canonical/', only: ['src/canonical/'], why: 'the canonical types stand alone' },
  {
    from: 'src/governance/',
    only: ['src/governance/', 'src/core/', 'src/canonical/', 'src/config/'],
    why: 'governance rules are framework-free, shared by both planes',
  },
  {
    from: 'src/api/',
    only: ['src/api/', 'src/core/', 'src/governance/', 'src/canonical/'],
    why: 'the API module is data and a client: no server, no store, no plane',
  },
  {
    from: 'src/pipeline/',
    only: ['src/pipeline/', 'src/core/', 'src/canonical/', 'src/config/', 'src/governance/', 'src/propagation/'],
    why: 'the request pipeline is a floor: it names no endpoint (the snapshot types of propagation only, see below)',
  },
  { from: 'src/mcp/', never: ['src/data-plane/'], why: 'the MCP gateway stands on the pipeline, not on the inference endpoints' },
  { from: 'src/telemetry/', never: ['src/data-plane/'], why: 'telemetry observes the pipeline, whatever the endpoint' },
  { from: 'src/control-plane/', never: ['src/data-plane/'], why: 'the management plane does not import the data plane' },
  {
    from: 'src/data-plane/',
    never: ['src/store/', 'src/control-plane/', 'src/records/', 'src/conversations/', 'src/audit/'],
    why: 'the data plane knows no store and no management plane',
  },
  {
    from: 'src/propagation/',
    never: ['src/control-plane/', 'src/data-plane/'],
    why: 'propagation builds snapshots from the store for any plane',
  },
  {
    from: 'src/records/',
    never: ['src/control-plane/', 'src/data-plane/'],
    why: 'the record writer serves both planes through core/records.ts',
  },
  {
    from: 'src/formats/',
    never: ['src/data-plane/', 'src/control-plane/', 'src/store/', 'src/providers/'],
    why: 'client formats convert to and from canonical only',
  },
  {
    from: 'src/providers/',
    never: ['src/data-plane/', 'src/control-plane/', 'src/store/', 'src/formats/'],
    why: 'provider adapters are pure: canonical to wire and back',
  },
  {
    from: 'iac/',
    only: ['iac/', 'src/api/', 'src/core/', 'src/governance/', 'src/canonical/'],
    why: 'the Terraform provider and constructs reach the gateway only through the API module',
  },
];

const brokenRules = (g: ImportGraph): string[] => {
  const broken: string[] = [];
  for (const [file, targets] of g.edges) {
    for (const rule of RULES) {
      if (!file.startsWith(rule.from)) continue;
      for (const t of targets) {
        const bad = rule.only ? !rule.only.some((p) => t.startsWith(p)) : (rule.never ?? []).some((p) => t.startsWith(p));
        if (bad) broken.push(`${file} → ${t} (${rule.why})`);
      }
    }
  }
  return broken;
};

test('every import follows the layering rules of architecture.md', () => {
  const g = importGraph(...SOURCES);
  expect(g.files.length).toBeGreaterThan(200);
  expect(brokenRules(g)).toEqual([]);
});

test('type imports follow the same rules: no layer names a type of a layer it may not import', () => {
  const g = typeAwareGraph(...SOURCES);
  expect(g.files.length).toBeGreaterThan(200);
  expect(brokenRules(g)).toEqual([]);
});

test('the pipeline uses propagation for its snapshot types only: no value import of it', () => {
  // Type imports of the snapshot and holder are the request contract; code of propagation is not.
  expect(forbiddenEdges(importGraph(...SOURCES), 'src/pipeline/', ['src/propagation/'])).toEqual([]);
  expect(forbiddenEdges(typeAwareGraph(...SOURCES), 'src/pipeline/', ['src/propagation/']).length).toBeGreaterThan(0);
});

/** The largest import cycle allowed anywhere in src/ (type imports counted). */
const MAX_CYCLE = 4;

test(`no import cycle of src/ has more than ${MAX_CYCLE} files (type imports counted)`, () => {
  const g = typeAwareGraph(...SOURCES.filter((f) => f.startsWith('src/')));
  const cycles = importCycles(g);
  expect(cycles.filter((c) => c.length > MAX_CYCLE)).toEqual([]);
});

test('the Terraform provider loads no server code: its module graph stays within iac/ and the API module', () => {
  const g = importGraph('iac/provider/main.ts');
  const outside = g.files.filter(
    (f) => !f.startsWith('iac/') && !['src/api/', 'src/core/', 'src/governance/', 'src/canonical/'].some((p) => f.startsWith(p)),
  );
  expect(outside).toEqual([]);
  expect(
    g.packages.filter((p) => p === 'elysia' || p.startsWith('drizzle-orm') || p === 'postgres' || p.startsWith('@electric-sql/')),
  ).toEqual([]);
});
