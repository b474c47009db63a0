import { join } from 'node:path';

/**
 * A Bun macro (imported `with { type: 'macro' }` by assets.ts): bundles the console for the browser
 * when assets.ts is transpiled — by `bun build --compile`, so the compiled binary carries the result,
 * or on the first load under `bun run` / `bun test`. Its answer is inlined as string constants: no
 * build output on disk, nothing fetched at run time. Bun.build cannot be called from inside a
 * macro (the bundler waits on the macro), so it runs Bun's CLI, the way Bun's own message advises.
 */
export function bundleConsole(): { js: string; css: string } {
  const dir = join(import.meta.dir, 'app');
  const built = Bun.spawnSync([process.execPath, 'build', join(dir, 'main.tsx'), '--target=browser', '--format=esm', '--minify'], {
    env: { ...process.env, BUN_BE_BUN: '1', NODE_ENV: 'production' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (built.exitCode !== 0) throw new Error(`console bundle failed: ${built.stderr.toString()}`);
  const css = Bun.spawnSync([process.execPath, 'build', join(dir, 'style.css'), '--minify'], {
    env: { ...process.env, BUN_BE_BUN: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (css.exitCode !== 0) throw new Error(`console styles failed: ${css.stderr.toString()}`);
  return { js: built.stdout.toString(), css: css.stdout.toString() };
}
