#!/usr/bin/env bun
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config/env.ts';
import { SecretBox } from './core/secrets.ts';
import { openStore } from './store/db.ts';
import { rewrapStore, staleWrapped } from './store/rewrap.ts';

/**
 * `bun run kek:rotate`: re-wraps every wrapped secret of the store (provider connection keys,
 * BYOK secrets, signing keys, every `*_wrapped` / `*_encrypted` column) under GATEWAY_KEK, reading
 * values wrapped under the keys of GATEWAY_KEK_PREVIOUS. Same database settings as the gateway
 * (DATABASE_URL, or the embedded database in GATEWAY_DATA_DIR). Exits 0 when no value is left
 * under an old KEK, 1 otherwise (the report names the columns). See docs/security.md, "Secrets at rest and KEK rotation".
 */
export const KEK_ROTATE_USAGE = `usage: gateway kek:rotate (from source: bun run kek:rotate)
  Re-wraps every wrapped secret of the store under GATEWAY_KEK, reading values wrapped under
  the keys of GATEWAY_KEK_PREVIOUS. Same database settings as the gateway (DATABASE_URL, or the
  embedded store in GATEWAY_DATA_DIR, whose generated kek file is used when GATEWAY_KEK is unset).
  Exit 0: no value is left under an old KEK; 1: some are (the report names the columns); 2: a
  configuration error. Run it after every replica has GATEWAY_KEK=new and GATEWAY_KEK_PREVIOUS=old.
  --help    this text`;

/** The command: re-wraps and reports; resolves to the exit code. */
export const kekRotate = async (argv: readonly string[]): Promise<number> => {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${KEK_ROTATE_USAGE}\n`);
    return 0;
  }
  try {
    return await rotate(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`kek:rotate: configuration error: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`kek:rotate: failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
};

const rotate = async (argv: readonly string[]): Promise<number> => {
  const config = loadConfig(argv, process.env);
  let kek = config.kek;
  if (!kek && !config.databaseUrl) {
    const file = join(config.dataDir, 'kek');
    if (existsSync(file)) kek = readFileSync(file, 'utf8').trim();
  }
  if (!kek) throw new ConfigError('GATEWAY_KEK', 'set it to the new key-encryption key (and GATEWAY_KEK_PREVIOUS to the old one)');
  const secrets = new SecretBox(kek, config.kekPrevious);
  const store = config.databaseUrl
    ? await openStore({ driver: 'postgres', url: config.databaseUrl })
    : await openStore({ driver: 'pglite', dataDir: config.dataDir });
  try {
    const report = await rewrapStore(store.db, secrets);
    const stale = await staleWrapped(store.db, secrets);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(`kek:rotate: current KEK version ${secrets.currentKekId}`);
    out(`kek:rotate: columns ${report.columns.map((c) => `${c.table}.${c.column}`).join(', ')}`);
    out(`kek:rotate: re-wrapped ${report.rewrapped}, already current ${report.current}, left under an old KEK ${stale}`);
    for (const f of report.failed)
      out(
        `kek:rotate: ${f.count} value(s) in ${f.table}.${f.column} unwrap with no key of the ring (add the KEK they were wrapped with to GATEWAY_KEK_PREVIOUS)`,
      );
    return stale === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
};

if (import.meta.main) process.exit(await kekRotate(process.argv.slice(2)));
