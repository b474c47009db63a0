import type { Server } from 'bun';
import { sql } from 'drizzle-orm';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../package.json' with { type: 'json' };
import { publishedKeys } from './audit/keys.ts';
import { TelemetryForwarder } from './audit/forwarder.ts';
import { AuditSealer, sealLagMs } from './audit/sealer.ts';
import { ConfigError, type GatewayConfig } from './config/env.ts';
import { sha256Hex, randomToken } from './core/ids.ts';
import { describeError, log } from './core/log.ts';
import { generateKek, SecretBox } from './core/secrets.ts';
import { Spool } from './core/spool.ts';
import { ManagementAuth } from './control-plane/auth.ts';
import type { OpDef } from './control-plane/connect.ts';
import { mcpPinSink } from './control-plane/services/mcp-pins.ts';
import type { ControlDeps } from './control-plane/deps.ts';
import { startControlServer } from './control-plane/server.ts';
import { localInferenceUrl } from './console/inference-relay.ts';
import { OidcIssuer } from './control-plane/oidc.ts';
import { scimHandler } from './control-plane/scim/routes.ts';
import { liveCustomerId, managementOps, serviceAccountJwks, serviceAccountVerifier, userTokenVerifier } from './control-plane/index.ts';
import { dataplaneProtocol } from './control-plane/dataplane-protocol.ts';
import { DbConversationStore } from './conversations/db-store.ts';
import { Conversations } from './data-plane/conversations.ts';
import { cutOpenStreams, gatewayShutdown, setStreamStallTimeout } from './data-plane/respond.ts';
import { startDataPlaneServer } from './data-plane/server.ts';
import { setUpstreamBounds } from './core/upstream-bounds.ts';
import { seedDemo } from './demo.ts';
import { SnapshotController } from './propagation/controller.ts';
import { SnapshotHolder } from './propagation/holder.ts';
import { readYourWrites } from './propagation/read-your-writes.ts';
import { getAdapter } from './providers/registry.ts';
import { directStore, workerStore } from './records/backend.ts';
import { BodyFiles, readBodies } from './records/body-files.ts';
import { RecordWriter } from './records/writer.ts';
import { sharedCounters } from './governance/shared-counters.ts';
import { Breakers } from './governance/breaker.ts';
import { SharedBreakers, targetHealthOf } from './governance/breaker-share.ts';
import { governancePolicies } from './data-plane/policies/index.ts';
import { configureGuardrailScans } from './governance/scan-pool.ts';
import { responseCacheStore } from './data-plane/cache/store.ts';
import { batchLineRunner } from './data-plane/batches.ts';
import type { InferenceDeps } from './data-plane/deps.ts';
import { BatchRunner } from './batches/runner.ts';
import { DbBatchService } from './batches/service.ts';
import { Observers } from './pipeline/observe.ts';
import { recordsObserver } from './pipeline/record.ts';
import { RecordRetention } from './records/retention.ts';
import { startTelemetry } from './telemetry/tracing.ts';
import { schemeOf } from './core/tls.ts';
import { openStore, type Store } from './store/db.ts';
import { adminTokens, customers } from './store/schema/index.ts';

export interface Gateway {
  config: GatewayConfig;
  store: Store;
  snapshots: SnapshotHolder;
  controller: SnapshotController;
  records: RecordWriter;
  inference: Server<undefined> | undefined;
  admin: { server: { port?: number } | null; stop: () => Promise<void> } | undefined;
  inferenceUrl: string;
  adminUrl: string;
  /**
   * Graceful stop: both listeners stop accepting, requests and streams in flight finish (up to
   * `graceMs`, default GATEWAY_SHUTDOWN_GRACE); streams still open then are ended with an error
   * event (recorded as `gateway_shutdown`); then queued records are written and the store closed.
   * Calling it again while it waits ends the wait at once.
   */
  /** Printed once when generated (or the configured one); undefined when hashes were already stored. */
  adminToken: string | undefined;
  demo: { apiKey: string; curl: string } | undefined;
  /** The audit checkpoint sealer (management roles). */
  audit: { sealer: AuditSealer | undefined; forwarder: TelemetryForwarder | undefined };
  /** The `record-retention` purge (runs every 10 minutes; `purge()` runs a sweep now). */
  retention: RecordRetention;
  stop(graceMs?: number): Promise<void>;
}

/** `GATEWAY_DATA_DIR=memory://` keeps the embedded database in memory (tests, throw-away runs). */
const MEMORY = 'memory://';
/** Request/response bodies kept beside the embedded store's records (src/records/body-files.ts). */
const RECORD_BODIES_DIR = 'record-bodies';
/** Request records waiting on disk for the store (the same spool a separate data plane keeps). */
const RECORD_SPOOL_DIR = 'record-spool';
/**
 * Rows per COPY with the embedded store. A COPY on PGlite has a fixed cost of its own (parse,
 * commit, WAL, in WebAssembly): per row 55–57 µs in batches of 128 or 256, 40–41 at 512, 35 at
 * 1,000–2,000 (`bun bench/records-insert.ts 7 N copy-beside`). 512 keeps most of that and holds the
 * event loop ~20 ms at most per batch under saturation; at moderate rates batches are smaller
 * anyway (the flush interval fires first).
 */
const EMBEDDED_RECORD_BATCH = 512;

/** The KEK: from GATEWAY_KEK, or (embedded mode only) generated once into the data dir. */
const loadKek = (config: GatewayConfig): string => {
  if (config.kek) return config.kek;
  if (config.databaseUrl) throw new ConfigError('GATEWAY_KEK', 'required when DATABASE_URL is set');
  if (config.dataDir === MEMORY) return generateKek();
  const file = join(config.dataDir, 'kek');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const kek = generateKek();
  writeFileSync(file, `${kek}\n`, { mode: 0o600 });
  log.warn('GATEWAY_KEK is not set: generated a key-encryption key into the data directory; set GATEWAY_KEK in production', { file });
  return kek;
};

/** Admin token hashes: the configured token, else the stored ones, else a new one printed once. */
const loadAdminHashes = async (store: Store, config: GatewayConfig): Promise<{ hashes: string[]; generated: string | undefined }> => {
  if (config.adminToken) return { hashes: [sha256Hex(config.adminToken)], generated: undefined };
  const rows = await store.db.select({ h: adminTokens.tokenHash }).from(adminTokens);
  if (rows.length > 0) return { hashes: rows.map((r) => r.h), generated: undefined };
  const token = `gwadm-${randomToken(40)}`;
  await store.db.insert(adminTokens).values({ tokenHash: sha256Hex(token) });
  return { hashes: [sha256Hex(token)], generated: token };
};

const openReadStoreOrFail = async (url: string, poolMax: number): Promise<Store> => {
  try {
    return await openStore({ driver: 'postgres', url, poolMax }, { migrate: false });
  } catch (e) {
    throw new ConfigError('DATABASE_READ_URL', `cannot open the read replica (${describeError(e)})`);
  }
};

const openStoreOrFail = async (config: GatewayConfig): Promise<Store> => {
  try {
    if (config.databaseUrl)
      return await openStore({ driver: 'postgres', url: config.databaseUrl, poolMax: config.dbPoolMax }, { migrate: config.migrate });
    return await openStore(
      { driver: 'pglite', dataDir: config.dataDir === MEMORY ? 'memory' : config.dataDir, sharedBuffersKb: config.pgliteSharedBuffersKb },
      { migrate: config.migrate },
    );
  } catch (e) {
    const why = describeError(e);
    throw new ConfigError(config.databaseUrl ? 'DATABASE_URL' : 'GATEWAY_DATA_DIR', `cannot open the database (${why})`);
  }
};

/** Composition root: store, snapshot controller, record sink and the two listeners. */
export const startGateway = async (config: GatewayConfig): Promise<Gateway> => {
  if (config.role === 'data') throw new ConfigError('--role', 'a data plane is started with startDataNode (app-data.ts), not startGateway');
  const store = await openStoreOrFail(config);
  const kek = loadKek(config);
  const secrets = new SecretBox(kek, config.kekPrevious);
  const snapshots = new SnapshotHolder();
  // The propagation worker (propagation/worker.ts): with PostgreSQL it has its own connection (and
  // the KEK, to decrypt provider keys); with PGlite it asks this thread, the database's one owner.
  const controller = new SnapshotController(
    {
      store,
      secrets,
      upstreamAllowPrivate: config.upstreamAllowPrivate,
      ...(config.databaseUrl ? { postgres: { url: config.databaseUrl, kek, kekPrevious: config.kekPrevious } } : {}),
      timing: { pollMs: config.pollIntervalMs, driftSweepMs: config.driftSweepIntervalMs, fullSyncEvery: config.fullSyncEveryNDriftTicks },
      listen: config.workerListen,
    },
    snapshots,
    getAdapter,
  );
  const ryw = readYourWrites(controller, snapshots);
  // PostgreSQL: records are written by a thread with its own connection; PGlite: by the main
  // thread, its only owner (stack-notes §3).
  // With the embedded store in a directory, bodies go to files beside the rows (body-files.ts).
  const bodyFiles =
    !config.databaseUrl && config.dataDir !== MEMORY && config.recordBodies
      ? new BodyFiles(join(config.dataDir, RECORD_BODIES_DIR))
      : undefined;
  const records = new RecordWriter(config.databaseUrl ? workerStore(config.databaseUrl, config.recordWriters) : directStore(store.db), {
    flushMs: config.recordFlushMs,
    writers: config.recordWriters,
    // PGlite holds the event loop for each batch: bounded rows per COPY keep requests from waiting
    // behind a whole backlog (docs/benchmarks.md); PostgreSQL batches go to a thread.
    ...(config.databaseUrl ? {} : { maxBatch: EMBEDDED_RECORD_BATCH }),
    ...(bodyFiles ? { bodyFiles } : {}),
    maxQueued: config.recordQueueMax,
    // With a data directory, records the store cannot take now wait on disk (core/spool.ts).
    ...(config.dataDir === MEMORY ? {} : { spool: new Spool(join(config.dataDir, RECORD_SPOOL_DIR)) }),
  });
  const telemetry = await startTelemetry(config.telemetry, pkg.version);
  telemetry.watchMetrics({
    recordsQueued: () => records.stats.queued,
    revisions: () => [{ dataplane: 'local', desired: snapshots.current?.revision ?? null, applied: snapshots.current?.revision ?? null }],
  });
  // Rate-limit and budget counters: Redis when REDIS_URL is set (shared by every data plane), else
  // this process's own (the embedded data plane's, read by GetBudget too).
  const counters = sharedCounters({ redisUrl: config.redisUrl, leases: config.limitsLeases });
  configureGuardrailScans({ timeoutMs: config.guardrailScanTimeoutMs });
  const policies = governancePolicies(counters, config.limitsOnRedisError);
  const responseCache = responseCacheStore(config);
  // DATABASE_READ_URL: record searches and usage on a replica (never migrated from here: it follows the primary).
  const readStore = config.databaseReadUrl ? await openReadStoreOrFail(config.databaseReadUrl, config.dbPoolMax) : undefined;
  // Circuit breakers (contract §14): the embedded data plane's, shared through Redis when REDIS_URL is set.
  const breakers = new Breakers();
  const sharedBreakers = config.redisUrl ? new SharedBreakers(config.redisUrl, breakers) : undefined;
  // The shared state is read before serving: a target another plane opened gets no first request from this one.
  await sharedBreakers?.synced;
  telemetry.watchMetrics({ circuits: breakers });
  const deps: ControlDeps = {
    db: store.db,
    ...(readStore ? { readDb: readStore.db } : {}),
    secrets,
    counters,
    targetHealth: targetHealthOf(config.redisUrl, breakers),
    upstreamAllowPrivate: config.upstreamAllowPrivate,
    ...(config.oidc ? { oidc: new OidcIssuer(config.oidc) } : {}),
    embeddedStore: !config.databaseUrl,
    ...(config.databaseUrl || config.dataDir === MEMORY
      ? {}
      : { recordBodies: (at: string) => readBodies(join(config.dataDir, RECORD_BODIES_DIR), at) }),
    // Held pulls of separate data planes wait on it (woken by NOTIFY, or by the worker's poll).
    configChanged: controller.signal,
    changeRecorded: ryw.changeRecorded,
  };

  // Telemetry forwarding (every config: audit_logs from the audit log, traces/metrics/logs from the request records) runs in the management process.
  const forwarder =
    config.role === 'all' || config.role === 'control'
      ? new TelemetryForwarder(store.db, secrets, {
          lagMs: sealLagMs(config.auditCheckpointIntervalMs),
          version: pkg.version,
          allowInward: config.upstreamAllowPrivate,
          metricsTenantLabels: config.telemetry.metrics.tenantLabels,
          ...(deps.recordBodies ? { recordBodies: deps.recordBodies } : {}),
        })
      : undefined;
  const ops: OpDef[] = managementOps(deps, {
    flushRecords: () => records.flush(),
    localStatus: () => controller.status,
    ...(forwarder ? { auditForwarder: forwarder } : {}),
  });
  const firstStart = (await store.db.select({ id: customers.id }).from(customers).limit(1)).length === 0;
  const demo = !config.databaseUrl && config.demo && firstStart ? await seedDemo(ops) : undefined;
  const admin = await loadAdminHashes(store, config);

  await controller.start();
  records.start();
  setUpstreamBounds(config.limits);
  setStreamStallTimeout(config.limits.streamStallMs);

  // Stored Responses and Messages threads: in the management plane's database (contract §2).
  const conversationStore = new DbConversationStore(store.db, config.responseRetentionMs);
  conversationStore.start(Math.min(config.responseRetentionMs, 3_600_000));
  const conversations = new Conversations(conversationStore, { backgroundLeaseMs: config.backgroundLeaseMs });
  // The `record-retention` setting's `days` (contract §8): expired records, bodies and stored conversations purged every 10 minutes.
  const retention = new RecordRetention(store.db, {
    responseRetentionMs: config.responseRetentionMs,
    ...(config.databaseUrl || config.dataDir === MEMORY ? {} : { bodiesDir: join(config.dataDir, RECORD_BODIES_DIR) }),
  });
  retention.start();
  const ready = () => snapshots.current !== undefined;
  let inference: Server<undefined> | undefined;
  let batchRunner: BatchRunner | undefined;
  let adminApp: ReturnType<typeof startControlServer> | undefined;
  try {
    if (config.role === 'all') {
      const inferenceDeps: InferenceDeps = {
        snapshots,
        observers: new Observers([...telemetry.observers, recordsObserver(records)]),
        recordBodies: config.recordBodies,
        keepAliveMs: config.keepAliveMs,
        bodyLimits: config.limits,
        policies,
        counters,
        breakers,
        responseCache,
        conversations,
        catchUp: ryw.catchUp,
      };
      // Files and batches (contract §11): in this store, run through this data plane's pipeline.
      batchRunner = new BatchRunner(store.db, batchLineRunner(inferenceDeps), {
        concurrency: config.batchConcurrency,
        input: { maxLines: config.batchMaxLines, maxLineBytes: config.limits.maxBodyBytes },
      });
      const runner = batchRunner;
      inferenceDeps.batches = { service: new DbBatchService(store.db, () => runner.wake()), maxFileBytes: config.fileMaxBytes };
      inference = startDataPlaneServer({
        host: config.host,
        port: config.port,
        ...(config.tls.inference ? { tls: config.tls.inference } : {}),
        ...(config.oidc ? { oidcIssuer: config.oidc.issuer } : {}),
        // What the embedded data plane lists of pinned MCP servers goes straight into the store.
        mcpPins: mcpPinSink(deps),
        deps: inferenceDeps,
        limits: config.limits,
        ready,
        readiness: () => ({ revision: snapshots.current?.revision ?? null, records: records.stats, metrics: telemetry.metricsListener }),
      });
    }
    if (config.role === 'all' || config.role === 'control') {
      const auth = new ManagementAuth(admin.hashes, (slug) => liveCustomerId(store.db, slug));
      auth.addVerifier(userTokenVerifier(deps));
      auth.addVerifier(serviceAccountVerifier(deps));
      const protocol = dataplaneProtocol(deps, records, conversationStore);
      adminApp = startControlServer({
        host: config.adminHost,
        port: config.adminPort,
        ...(config.tls.admin ? { tls: config.tls.admin } : {}),
        maxBodyBytes: config.adminMaxBodyBytes,
        ops,
        auth,
        ready,
        pingDatabase: () => store.db.execute(sql`select 1`),
        metrics: () => telemetry.metricsListener,
        version: pkg.version,
        jwks: async () => ({ keys: [...(await publishedKeys(store.db)).keys, ...(await serviceAccountJwks(deps))] }),
        rawRoutes: protocol.routes,
        ...(deps.oidc ? { oidc: deps.oidc } : {}),
        ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
        scim: scimHandler(deps, config.publicUrl),
        ...(inference?.port !== undefined
          ? { inferenceUrl: localInferenceUrl(config.host, inference.port, config.tls.inference !== undefined) }
          : {}),
      });
    }
  } catch (e) {
    inference?.stop(true);
    await store.close();
    const busy = e instanceof Error && /EADDRINUSE|in use/i.test(e.message);
    throw busy ? new ConfigError(inference ? 'GATEWAY_ADMIN_PORT' : 'GATEWAY_PORT', 'port is already in use') : e;
  }

  // The management process seals audit checkpoints (every replica runs a sealer; they take turns).
  const sealer = adminApp ? new AuditSealer(store.db, secrets, { intervalMs: config.auditCheckpointIntervalMs }) : undefined;
  sealer?.start();
  if (adminApp) forwarder?.start();
  batchRunner?.start();

  const inferenceUrl = inference ? `${schemeOf(config.tls.inference)}://${config.host}:${inference.port}` : '';
  const adminUrl = adminApp?.server ? `${schemeOf(config.tls.admin)}://${config.adminHost}:${adminApp.server.port}` : '';
  let stopping: Promise<void> | undefined;
  let hurry: (() => void) | undefined;
  const drain = async (graceMs: number): Promise<void> => {
    const listeners = Promise.all([inference?.stop(false), adminApp?.server?.stop(false)]).then(() => 'drained' as const);
    const hurried = new Promise<'deadline'>((resolve) => {
      const timer = setTimeout(() => resolve('deadline'), graceMs);
      hurry = () => {
        clearTimeout(timer);
        resolve('deadline');
      };
    });
    const first = await Promise.race([listeners, hurried]);
    hurry = undefined;
    if (first === 'drained') return;
    const cut = cutOpenStreams(gatewayShutdown());
    log.warn('shutdown grace period over: ending what is still in flight', { streams: cut });
    // The error events are flushed by the streams' close; give them a moment before cutting sockets.
    await Promise.race([listeners, Bun.sleep(500)]);
    inference?.stop(true);
    await adminApp?.server?.stop(true);
  };
  return {
    config,
    store,
    snapshots,
    controller,
    records,
    inference,
    admin: adminApp ? { server: adminApp.server, stop: async () => void (await adminApp.stop(true)) } : undefined,
    inferenceUrl,
    adminUrl,
    adminToken: admin.generated ?? config.adminToken,
    demo: demo ? { apiKey: demo.apiKey, curl: demo.curl(inferenceUrl) } : undefined,
    audit: { sealer, forwarder },
    retention,
    stop(graceMs = config.shutdownGraceMs) {
      if (stopping) {
        hurry?.();
        return stopping;
      }
      stopping = (async () => {
        // Held pulls answer at once instead of holding the drain.
        controller.signal.close();
        // Background responses get the same grace; those still running then are stored failed.
        await Promise.all([drain(graceMs), conversations.runs.drain(graceMs)]);
        await batchRunner?.stop();
        await controller.stop();
        await conversationStore.stop();
        await retention.stop();
        await Promise.all([sealer?.stop(), forwarder?.stop()]);
        await records.stop().catch((e: unknown) => log.error('writing the queued request records failed', { error: describeError(e) }));
        await telemetry.shutdown().catch(() => undefined);
        await store.close();
        await readStore?.close();
        await counters.close();
        sharedBreakers?.close();
        responseCache.close();
      })();
      return stopping;
    },
  };
};
