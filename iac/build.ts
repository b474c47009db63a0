import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Builds the construct library for publishing (`bun run build` in iac/, or `bun run iac:build`):
 * dist/index.js — one ES module for Node and Bun with `cdktf` and `constructs` left to the
 * consumer (peer dependencies: exactly one CDK loads, cdktf or CDK Terrain aliased as `cdktf`) —
 * and dist/**\/*.d.ts from the TypeScript sources. Never committed (dist/ is ignored).
 */

const DIR = import.meta.dir;
const DIST = join(DIR, 'dist');

export const buildLibrary = async (): Promise<string> => {
  rmSync(DIST, { recursive: true, force: true });
  const out = await Bun.build({
    entrypoints: [join(DIR, 'index.ts')],
    outdir: DIST,
    target: 'node',
    format: 'esm',
    external: ['cdktf', 'constructs'],
  });
  if (!out.success) throw new Error(`bun build failed: ${out.logs.map((l) => l.message).join('; ')}`);
  const tsc = Bun.spawnSync([join(DIR, '..', 'node_modules', '.bin', 'tsc'), '-p', join(DIR, 'tsconfig.build.json')], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (tsc.exitCode !== 0) throw new Error(`tsc (declarations) failed:\n${tsc.stdout.toString()}${tsc.stderr.toString()}`);
  // The declarations name the sources' relative imports `.ts`: published, they are `.js`.
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
  for (const f of walk(DIST).filter((x) => x.endsWith('.d.ts')))
    writeFileSync(f, readFileSync(f, 'utf8').replace(/(from\s+'\.{1,2}\/[^']+)\.ts'/g, "$1.js'"));
  return DIST;
};

if (import.meta.main) console.log(`built ${await buildLibrary()}`);
