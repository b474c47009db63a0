import { ROOT } from './import-graph.ts';

/**
 * Git's own reading of the repository's .gitattributes (`git check-attr`): which of the given
 * paths (relative to the root; they need not exist) are marked `linguist-generated`, and which
 * have their textual diff turned off (`-diff`).
 */
export const attributesOf = (paths: readonly string[]): Map<string, { generated: boolean; noDiff: boolean }> => {
  const out = new Map<string, { generated: boolean; noDiff: boolean }>();
  if (paths.length === 0) return out;
  const p = Bun.spawnSync(['git', '-C', ROOT, 'check-attr', '--stdin', '-z', 'linguist-generated', 'diff'], {
    stdin: Buffer.from(`${paths.join('\0')}\0`),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (p.exitCode !== 0) throw new Error(`git check-attr failed: ${p.stderr.toString()}`);
  // -z: path NUL attribute NUL value NUL, repeated.
  const fields = p.stdout.toString().split('\0');
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [path = '', attr, value] = [fields[i], fields[i + 1], fields[i + 2]];
    const a = out.get(path) ?? { generated: false, noDiff: false };
    if (attr === 'linguist-generated') a.generated = value === 'set' || value === 'true';
    if (attr === 'diff') a.noDiff = value === 'unset';
    out.set(path, a);
  }
  return out;
};

/** The files git tracks (relative to the root). */
export const trackedFiles = (): string[] => {
  const p = Bun.spawnSync(['git', '-C', ROOT, 'ls-files', '-z'], { stdout: 'pipe', stderr: 'pipe' });
  if (p.exitCode !== 0) throw new Error(`git ls-files failed: ${p.stderr.toString()}`);
  return p.stdout.toString().split('\0').filter(Boolean);
};
