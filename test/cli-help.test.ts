import { describe, expect, test } from 'bun:test';

/**
 * `--help` for every command of the CLI (and `help <command>`): exit 0, the command's usage on
 * stdout, nothing started (serve --help must not listen, migrate --help must not open a store).
 */

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const run = (args: string[], env: Record<string, string> = {}) => {
  // An unusable database and data dir: a command that ignored --help would fail, not print usage.
  const p = Bun.spawnSync(['bun', MAIN, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      GATEWAY_KEK: '',
      GATEWAY_DATA_DIR: '/proc/none',
      GATEWAY_PORT: '1',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 20_000,
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
};

const EXPECT: Record<string, RegExp[]> = {
  serve: [/^usage: gateway serve/, /--role all/, /--role control/, /--role data/, /--service-account FILE/],
  migrate: [/^usage: gateway migrate/, /GATEWAY_MIGRATE=0/],
  install: [/install/, /--platform/, /--help/],
  'audit:verify': [/^usage: gateway audit:verify/, /--endpoint URL/, /--token T/, /--entry ID/],
  'kek:rotate': [/^usage: gateway kek:rotate/, /GATEWAY_KEK_PREVIOUS/],
};

describe('gateway --help', () => {
  test('the top-level usage lists every command', () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const r = run(args);
      expect(r.code).toBe(0);
      for (const c of [...Object.keys(EXPECT), 'help']) expect(r.out).toContain(`  ${c}`);
    }
  });

  for (const [command, patterns] of Object.entries(EXPECT)) {
    test(`${command} --help and help ${command}: its usage, exit 0, nothing started`, () => {
      for (const args of [
        [command, '--help'],
        ['help', command],
      ]) {
        const r = run(args);
        expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' });
        for (const p of patterns) expect(r.out).toMatch(p);
      }
    });
  }

  test('the package scripts print the same usage (bun run audit:verify --help, bun run kek:rotate --help)', () => {
    for (const [file, first] of [
      ['../src/audit/verify.ts', 'usage: gateway audit:verify'],
      ['../src/kek-rotate.ts', 'usage: gateway kek:rotate'],
    ] as const) {
      const p = Bun.spawnSync(['bun', new URL(file, import.meta.url).pathname, '--help'], { stdout: 'pipe', stderr: 'pipe' });
      expect(p.exitCode).toBe(0);
      expect(p.stdout.toString().startsWith(first)).toBe(true);
    }
  });

  test('an unknown command or help topic is a configuration error (exit 2)', () => {
    for (const args of [['bogus'], ['help', 'bogus']]) {
      const r = run(args);
      expect(r.code).toBe(2);
      expect(r.err).toContain("unknown command 'bogus'");
    }
  });
});
