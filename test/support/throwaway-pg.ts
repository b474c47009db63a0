import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free port, which the test
 * may stop (as abruptly as a crash: `pg_ctl stop -m immediate`) and start again. Needs `initdb` and
 * `pg_ctl` on PATH; run as root, the server runs as the `postgres` OS user.
 */
export interface ThrowawayPostgres {
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

/** Why a throw-away server cannot be made here, or undefined when it can. */
export const throwawayUnavailable = (): string | undefined => {
  if (!Bun.which('initdb') || !Bun.which('pg_ctl')) return 'initdb/pg_ctl not found on PATH';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return "running as root but there is no 'postgres' OS user";
  return undefined;
};

/** A TCP port nobody listens on right now (127.0.0.1). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

const run = (args: string[]): void => {
  const asRoot = process.getuid?.() === 0;
  const r = asRoot
    ? spawnSync('su', ['postgres', '-c', args.map(quote).join(' ')], { encoding: 'utf8' })
    : spawnSync(args[0] as string, args.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.slice(0, 2).join(' ')} failed (${r.status}): ${(r.stderr || r.stdout || '').slice(0, 500)}`);
};

export const startThrowawayPostgres = async (): Promise<ThrowawayPostgres> => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  run(['initdb', '-D', data, '-U', 'gateway', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const start = () =>
    run([
      'pg_ctl',
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  const stop = () => run(['pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop']);
  start();
  let running = true;
  return {
    url: `postgres://gateway@127.0.0.1:${port}/postgres`,
    stop: () => {
      if (running) stop();
      running = false;
    },
    start: () => {
      if (!running) start();
      running = true;
    },
    destroy: () => {
      try {
        if (running) stop();
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
};
