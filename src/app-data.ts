import type { Server } from 'bun';
import { schemeOf } from './core/tls.ts';
import { mkdirSync } from 'node:fs';
import pkg from '../package.json' with { type: 'json' };
import type { GatewayConfig } from './config/env.ts';
import { ConfigError } from './config/env.ts';
import { describeError, log } from './core/log.ts';
import { Conversations } from './data-plane/conversations.ts';
import { RemoteConversationStore } from './data-plane/remote/conversations.ts';
import { remoteMcpPinSink } from './data-plane/remote/mcp-pins.ts';
import { PullController } from './data-plane/remote/pull.ts';
import { pushRecordsWith, RemoteRecordSink } from './data-plane/remote/remote-sink.ts';
import { readServiceAccountFile, type ServiceAccountFile } from './data-plane/remote/service-account-file.ts';
import { cutOpenStreams, gatewayShutdown, setStreamStallTimeout } from './data-plane/respond.ts';
import { startDataPlaneServer } from './data-plane/server.ts';
import { setUpstreamBounds } from './core/upstream-bounds.ts';
import { SnapshotHolder } from './propagation/holder.ts';
import { getAdapter } from './providers/registry.ts';
import { Observers } from './pipeline/observe.ts';
import { recordsObserver } from './pipeline/record.ts';
import { responseCacheStore } from './data-plane/cache/store.ts';
import { governancePolicies } from './data-plane/policies/index.ts';
import { configureGuardrailScans } from './governance/scan-pool.ts';
import { sharedCounters } from './governance/shared-counters.ts';
import { Breakers } from './governance/breaker.ts';
import { SharedBreakers } from './governance/breaker-share.ts';
import { startSwitchableTelemetry } from './telemetry/switchable.ts';
import { accountTelemetryOf, DataExports } from './data-plane/remote/exports.ts';

/**
 * A separate data plane (`serve --role data --service-account FILE`, contract §5): no database,
 * no management modules. Configuration is pulled from the management plane named in the file;
 * request records are shipped to it (spooled to GATEWAY_DATA_DIR while it cannot take them).
 */
export interface DataNode {
  config: GatewayConfig;
  account: ServiceAccountFile;
  snapshots: SnapshotHolder;
  controller: PullController;
  records: RemoteRecordSink;
  inference: Server<undefined>;
  inferenceUrl: string;
  stop(graceMs?: number): Promise<void>;
}

export const startDataNode = async (config: GatewayConfig): Promise<DataNode> => {
  if (!config.serviceAccountFile) throw new ConfigError('--service-account', 'required with --role data');
  const account = readServiceAccountFile(config.serviceAccountFile);
  if (config.dataDir === 'memory://')
    throw new ConfigError('GATEWAY_DATA_DIR', 'a data plane needs a directory (records are spooled there)');
  mkdirSync(config.dataDir, { recursive: true });
  const snapshots = new SnapshotHolder();
  // Traces and OTLP metrics go where the service account says (identity file first, then every pulled document), unless the environment names an endpoint.
  const exports = new DataExports(config.telemetry, account.telemetry);
  const telemetry = await startSwitchableTelemetry(exports.initial, pkg.version);
  exports.follow(telemetry);
  const controller = new PullController(account, snapshots, getAdapter, {
    dataDir: config.dataDir,
    pollMs: config.pollIntervalMs,
    driftSweepMs: config.driftSweepIntervalMs,
    longPoll: config.workerListen,
    onDocument: (doc) => exports.apply(accountTelemetryOf(doc)),
  });
  const records = new RemoteRecordSink(pushRecordsWith(controller.client), config.dataDir, { flushMs: config.recordFlushMs });
  telemetry.watchMetrics({
    recordsQueued: () => records.stats.queued,
    revisions: () => [{ dataplane: account.workspaceId, desired: null, applied: snapshots.current?.revision ?? null }],
  });
  await controller.start();
  records.start();
  const conversations = new Conversations(new RemoteConversationStore(controller.client), { backgroundLeaseMs: config.backgroundLeaseMs });
  setUpstreamBounds(config.limits);
  setStreamStallTimeout(config.limits.streamStallMs);
  // The response cache (contract §11): on Redis when REDIS_URL is set (shared with the other data planes), else in process.
  const responseCache = responseCacheStore(config);
  // Guardrails, rate limits and budgets (contract §3.2), as on the embedded data plane: counters on
  // Redis when REDIS_URL is set (shared with the other data planes and the management plane's
  // GetBudget), else this process's own.
  const counters = sharedCounters({ redisUrl: config.redisUrl, leases: config.limitsLeases });
  configureGuardrailScans({ timeoutMs: config.guardrailScanTimeoutMs });
  const policies = governancePolicies(counters, config.limitsOnRedisError);
  // Circuit breakers (contract §14): this data plane's, shared with the others through Redis when REDIS_URL is set.
  const breakers = new Breakers();
  const sharedBreakers = config.redisUrl ? new SharedBreakers(config.redisUrl, breakers) : undefined;
  // The shared state is read before serving: a target another plane opened gets no first request from this one.
  await sharedBreakers?.synced;
  telemetry.watchMetrics({ circuits: breakers });
  let inference: Server<undefined>;
  try {
    inference = startDataPlaneServer({
      host: config.host,
      port: config.port,
      ...(config.tls.inference ? { tls: config.tls.inference } : {}),
      ...(config.oidc ? { oidcIssuer: config.oidc.issuer } : {}),
      // What this data plane lists of pinned MCP servers goes to the management plane.
      mcpPins: remoteMcpPinSink(controller.client),
      // The request path takes the embedded writer's type; the remote sink has the same add() contract.
      deps: {
        snapshots,
        observers: new Observers([...telemetry.observers, recordsObserver(records)]),
        recordBodies: config.recordBodies,
        keepAliveMs: config.keepAliveMs,
        bodyLimits: config.limits,
        responseCache,
        policies,
        counters,
        breakers,
        // Stored Responses and threads live in the management plane's store (usable through any data plane of the customer).
        conversations,
      },
      limits: config.limits,
      ready: () => snapshots.current !== undefined,
      readiness: () => ({
        role: 'data',
        dataplaneId: account.workspaceId,
        customerId: account.customerId,
        revision: snapshots.current?.revision ?? null,
        // The public base URL adopted from the workspace's newest PROXY_URL event (SetWorkspaceURL with triggerUpdate).
        publicUrl: snapshots.current?.publicUrl ?? null,
        managementPlane: controller.status.reachable ? 'reachable' : 'unreachable',
        serviceAccount: controller.status.refused ? 'refused' : 'ok',
        ...(controller.status.refused ? { refusedReason: controller.status.refused } : {}),
        configSource: controller.status.source,
        lastPullAt: controller.status.lastPullAt?.toISOString() ?? null,
        records: records.stats,
        metrics: telemetry.metricsListener,
      }),
    });
  } catch (e) {
    controller.stop();
    sharedBreakers?.close();
    void Promise.resolve(counters.close()).catch(() => undefined);
    const busy = e instanceof Error && /EADDRINUSE|in use/i.test(e.message);
    throw busy ? new ConfigError('GATEWAY_PORT', 'port is already in use') : e;
  }
  let stopping: Promise<void> | undefined;
  return {
    config,
    account,
    snapshots,
    controller,
    records,
    inference,
    inferenceUrl: `${schemeOf(config.tls.inference)}://${config.host}:${inference.port}`,
    stop(graceMs = config.shutdownGraceMs) {
      stopping ??= (async () => {
        const background = conversations.runs.drain(graceMs);
        const drained = await Promise.race([inference.stop(false).then(() => true), Bun.sleep(graceMs).then(() => false)]);
        if (!drained) {
          cutOpenStreams(gatewayShutdown());
          await Bun.sleep(200);
          inference.stop(true);
        }
        // Background responses still running after the grace are stored failed before the store goes.
        await background;
        controller.stop();
        sharedBreakers?.close();
        responseCache.close();
        await Promise.resolve(counters.close()).catch((e: unknown) =>
          log.error('closing the rate-limit and budget counters failed', { error: describeError(e) }),
        );
        await records
          .stop(5_000)
          .catch((e: unknown) => log.error('spooling the queued request records failed', { error: describeError(e) }));
        await telemetry.shutdown().catch(() => undefined);
      })();
      return stopping;
    },
  };
};
