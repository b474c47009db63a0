#!/usr/bin/env bun
import { ConfigError, loadConfig } from './config/env.ts';
import { readSetting } from './config/settings.ts';
import { describeError, log, setLogLevel } from './core/log.ts';

const USAGE = `usage: gateway <command> [--help] (from source: bun src/main.ts <command>)
  serve [--role all|control|data] [--service-account FILE]   run the gateway (default command)
  migrate                                                    apply pending database migrations and exit
  install --platform gcp [options]                           GCP prerequisites and the Helm release
  audit:verify --endpoint URL [--token T] [--entry ID]       verify the signed audit checkpoints
  kek:rotate                                                 re-wrap every stored secret under GATEWAY_KEK
  help [command]                                             this text, or a command's
Every command takes --help. Settings are environment variables: docs/reference/settings.md.`;

/** Each command's --help (install, audit:verify and kek:rotate print their own). */
const HELP: Record<'serve' | 'migrate', string> = {
  serve: `usage: gateway serve [--role all|control|data] [--service-account FILE]
  Runs the gateway until SIGTERM/SIGINT (then drains for GATEWAY_SHUTDOWN_GRACE).
  --role all                the inference and management APIs in one process (default)
  --role control            the management API only (a management plane for separate data planes)
  --role data               the inference API only, pulling its configuration from a management plane
  --service-account FILE    with --role data: the CreateServiceAccount answer to authenticate with
  --help                    this text
  Exit 2: a configuration error (one line naming the setting); 1: failed to start.
  Settings are environment variables: docs/reference/settings.md.`,
  migrate: `usage: gateway migrate
  Applies pending database migrations to DATABASE_URL (or the embedded store in GATEWAY_DATA_DIR)
  and exits 0. Run it once per upgrade before replicas started with GATEWAY_MIGRATE=0.
  --help    this text`,
};

const COMMANDS = ['serve', 'migrate', 'install', 'audit:verify', 'kek:rotate', 'help'] as const;
const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

/** CLI: `serve` (default), `migrate`, `install`, `audit:verify`, `kek:rotate`, `help`. */
const main = async (): Promise<void> => {
  const [command = 'serve', ...rest] = process.argv.slice(2);
  if (command === '--help' || command === '-h') return void process.stdout.write(`${USAGE}\n`);
  if (command === 'help') {
    const topic = rest[0];
    if (topic === undefined) return void process.stdout.write(`${USAGE}\n`);
    if (!COMMANDS.some((c) => c === topic)) throw new ConfigError('help', `unknown command '${topic}' (expected: ${COMMANDS.join(', ')})`);
    return run(topic, ['--help']);
  }
  return run(command, rest);
};

const run = async (command: string, rest: readonly string[]): Promise<void> => {
  if (command === 'help') return void process.stdout.write(`${USAGE}\n`);
  if ((command === 'serve' || command === 'migrate') && wantsHelp(rest)) return void process.stdout.write(`${HELP[command]}\n`);
  if (command === 'migrate') return migrateOnly();
  if (command === 'install') {
    const { runInstall } = await import('./install/index.ts');
    return process.exit(await runInstall(rest, { env: process.env, cwd: process.cwd(), out: process.stdout, err: process.stderr }));
  }
  if (command === 'audit:verify') {
    const verify = await import('./audit/verify.ts');
    return process.exit(await verify.main(rest));
  }
  if (command === 'kek:rotate') {
    const { kekRotate } = await import('./kek-rotate.ts');
    return process.exit(await kekRotate(rest));
  }
  if (command !== 'serve') throw new ConfigError('command', `unknown command '${command}' (expected: ${COMMANDS.join(', ')})`);
  const config = loadConfig(rest, process.env);
  setLogLevel(config.logLevel);
  const t0 = performance.now();
  if (config.role === 'data') return serveDataPlane(config, t0);
  // Loaded only for roles with a database: a data plane never imports the store or the management modules.
  const { startGateway } = await import('./app.ts');
  const gw = await startGateway(config);
  const startupMs = Math.round(performance.now() - t0);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (gw.inferenceUrl) out(`gateway: inference API on ${gw.inferenceUrl}/v1`);
  if (gw.adminUrl) out(`gateway: management API on ${gw.adminUrl} (OpenAPI at ${gw.adminUrl}/openapi)`);
  if (gw.adminToken && !config.adminToken) {
    out(`gateway: generated admin token (shown once, only its hash is stored): ${gw.adminToken}`);
  }
  if (gw.demo) {
    out('gateway: seeded a demo (customer "demo", model "echo"). Try:');
    out(`  ${gw.demo.curl}`);
  }
  out(`gateway: ready in ${startupMs} ms (${gw.store.driver}, config revision ${gw.snapshots.current?.revision ?? 0})`);
  // First signal: drain (GATEWAY_SHUTDOWN_GRACE), write queued records, exit 0. A second signal
  // ends the wait for what is still in flight at once.
  onSignals(
    config.shutdownGraceMs,
    () => gw.stop(),
    () => void gw.stop(),
  );
};

/** First signal: drain and stop (exit 0); a second one ends the wait at once. */
const onSignals = (graceMs: number, stop: () => Promise<void>, hurry: () => void): void => {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      log.warn('second signal: ending requests and streams in flight now', { signal });
      hurry();
      return;
    }
    stopping = true;
    log.info('shutting down: draining requests and streams in flight', { signal, graceMs });
    stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error('shutdown failed', { error: describeError(e) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
};

/**
 * `migrate`: applies pending migrations to DATABASE_URL (or the embedded store in GATEWAY_DATA_DIR)
 * and exits: the Helm chart runs it once per upgrade, replicas run with GATEWAY_MIGRATE=0.
 */
const migrateOnly = async (): Promise<void> => {
  const databaseUrl = readSetting('DATABASE_URL', process.env);
  const dataDir = readSetting('GATEWAY_DATA_DIR', process.env);
  const { openStore } = await import('./store/db.ts');
  const t0 = performance.now();
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = databaseUrl
      ? await openStore({ driver: 'postgres', url: databaseUrl })
      : await openStore({ driver: 'pglite', dataDir: dataDir === 'memory://' ? 'memory' : dataDir });
  } catch (e) {
    throw new ConfigError(databaseUrl ? 'DATABASE_URL' : 'GATEWAY_DATA_DIR', `cannot migrate the database (${describeError(e)})`);
  }
  await store.close();
  process.stdout.write(`gateway: migrations applied (${store.driver}) in ${Math.round(performance.now() - t0)} ms\n`);
};

/** `serve --role data --service-account FILE`: a data plane that pulls from its management plane. */
const serveDataPlane = async (config: ReturnType<typeof loadConfig>, t0: number): Promise<void> => {
  const { startDataNode } = await import('./app-data.ts');
  const node = await startDataNode(config);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `gateway: data plane '${node.account.workspaceId}' (customer ${node.account.customerId}) inference API on ${node.inferenceUrl}/v1, management plane ${node.account.apiUri}`,
  );
  out(`gateway: ready in ${Math.round(performance.now() - t0)} ms (config revision ${node.snapshots.current?.revision ?? 'none yet'})`);
  onSignals(
    config.shutdownGraceMs,
    () => node.stop(),
    () => void node.stop(0),
  );
};

main().catch((e: unknown) => {
  if (e instanceof ConfigError) {
    process.stderr.write(`gateway: configuration error: ${e.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`gateway: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
