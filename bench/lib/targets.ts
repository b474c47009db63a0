import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startDataplane } from './dataplane.ts';
import {
  createPostgresDatabase,
  launchGateway,
  type LaunchedGateway,
  type PostgresStore,
  type PreparedStore,
  prepareStore,
  provision,
  repoint,
  scratchDir,
} from './gateway.ts';
import { findPeer, peerDir, type RunningPeer, startPeer } from './peer.ts';
import { type Cores, pinned, POSTGRES_JSC_RAM_SIZE, ramSizeEnv, type Service, spawnService } from './proc.ts';
import { FLOOR_TARGETS, floorRequests, gatewayRequests, peerRequests, upstreamRequests } from './requests.ts';
import type { Results } from './results.ts';
import type { Target } from './scenarios.ts';

/**
 * What `bun run bench` measures, started: the mock upstream ("direct"), the bare Bun proxy, the
 * gateway on a provisioned store and, as asked, the product floor (bench/product-proxy.ts,
 * bodies kept as JSON strings and as raw bytes), Portkey's gateway, the gateway on an external
 * PostgreSQL store and a separate data plane. A target that fails to start is skipped with its
 * reason (the status lines of the report); the three first are required.
 */

export interface TargetOptions {
  quick: boolean;
  /** Provision a new store even when a template exists. */
  fresh: boolean;
  peer: boolean;
  /** The PostgreSQL server to create the database on, or undefined to skip that variant. */
  postgres: string | undefined;
  dataplane: boolean;
  /** The product floor beside the bare proxy. */
  floor: boolean;
}

/** What the caller stops and drops at the end, filled as things start (so that a failure part-way leaves nothing running). */
export interface Started {
  services: Service[];
  drops: (() => Promise<void>)[];
}

export interface Targets {
  targets: Target[];
  mockUrl: string;
  store: PreparedStore;
  gw: LaunchedGateway;
  peer: RunningPeer | undefined;
  peerStatus: Results['meta']['peer'];
  pg: { gw: LaunchedGateway; keys: string[]; db: PostgresStore } | undefined;
  pgStatus: Results['meta']['postgres'];
  dp: { url: string; pid: number; keys: string[] } | undefined;
  dpStatus: NonNullable<Results['meta']['dataplane']>;
  floorStatus: NonNullable<Results['meta']['floor']>;
}

const reason = (e: unknown): string => (e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e));

const startPeerTarget = async (o: TargetOptions, cores: Cores, started: Started): Promise<Pick<Targets, 'peer' | 'peerStatus'>> => {
  const info = findPeer();
  if (!o.peer)
    return {
      peer: undefined,
      peerStatus: { status: 'skipped', message: o.quick ? 'skipped in quick runs (--peer includes it)' : 'skipped (--no-peer)' },
    };
  if (!info)
    return {
      peer: undefined,
      peerStatus: {
        status: 'skipped',
        message: `Portkey gateway not installed in ${peerDir()} — run \`bash bench/peer/setup.sh\` to include it`,
      },
    };
  try {
    const peer = await startPeer(info, cores.server);
    started.services.push(peer.service);
    return {
      peer,
      peerStatus: {
        status: 'ran',
        message: `@portkey-ai/gateway ${info.version} on Bun ${Bun.version}`,
        version: info.version,
        ...(info.honoNodeServer ? { honoNodeServer: info.honoNodeServer } : {}),
      },
    };
  } catch (e) {
    return { peer: undefined, peerStatus: { status: 'skipped', message: `Portkey failed to start: ${reason(e)}` } };
  }
};

/** The same gateway on an external PostgreSQL store (records leave the process). */
const startPostgresTarget = async (
  url: string,
  mockUrl: string,
  cores: Cores,
  started: Started,
  log: (s: string) => void,
): Promise<Pick<Targets, 'pg' | 'pgStatus'>> => {
  let db: PostgresStore | undefined;
  try {
    db = await createPostgresDatabase(url);
    const setup = {
      dataDir: scratchDir('bench-gw-pg-'),
      kek: randomBytes(32).toString('base64'),
      adminToken: `bench-admin-${randomBytes(12).toString('hex')}`,
    };
    log('postgres: starting the gateway on a fresh database and provisioning it through the API…');
    const pgw = await launchGateway(setup, { cpu: cores.server, env: { DATABASE_URL: db.url, ...ramSizeEnv(POSTGRES_JSC_RAM_SIZE) } });
    started.services.push(pgw.service);
    const p0 = performance.now();
    const { keys } = await provision(pgw, mockUrl);
    const provisionMs = performance.now() - p0;
    started.drops.push(db.drop);
    return {
      pg: { gw: pgw, keys, db },
      pgStatus: {
        status: 'ran',
        message: `gateway with DATABASE_URL (server not pinned; its CPU is not in the gateway's figures), provisioned in ${(provisionMs / 1000).toFixed(1)} s`,
        provisionMs,
      },
    };
  } catch (e) {
    await db?.drop().catch(() => undefined);
    return { pg: undefined, pgStatus: { status: 'failed', message: `Postgres variant skipped: ${reason(e)}` } };
  }
};

/**
 * The lean deployment: a separate data plane of the bench customer on the server core, its
 * management plane (a second gateway on a copy of the store) on the load core — where a
 * deployment runs it, elsewhere; its work on the shipped records takes from the load side.
 */
const startDataplaneTarget = async (
  mockUrl: string,
  cores: Cores,
  started: Started,
  log: (s: string) => void,
): Promise<Pick<Targets, 'dp' | 'dpStatus'>> => {
  try {
    const mpStore = await prepareStore({ mock: mockUrl, cpu: cores.load, fresh: false, log });
    const mp = await launchGateway(mpStore.setup, { cpu: cores.load });
    started.services.push(mp.service);
    if (mpStore.source === 'template') await repoint(mp, mockUrl);
    const d = await startDataplane(mp, cores.server, mpStore.keys[0] as string);
    started.services.push(d.service);
    return {
      dp: { url: d.url, pid: d.service.pid, keys: mpStore.keys },
      dpStatus: {
        status: 'ran',
        message: `\`serve --role data\` on the server core; its management plane (records shipped to it) on the load core; serving after ${(d.startMs / 1000).toFixed(1)} s`,
        startMs: d.startMs,
      },
    };
  } catch (e) {
    return { dp: undefined, dpStatus: { status: 'failed', message: `separate data plane skipped: ${reason(e)}` } };
  }
};

/**
 * The product floor as the floor harness drives it (../shared/bench/README.md): the bare proxy's
 * flags plus `--work product --bodies json|raw`, on the server core like the bare proxy; its
 * record batches go to the mock's `/records-sink`.
 */
export const floorCommand = (mockUrl: string, bodies: 'json' | 'raw'): string[] => [
  'bun',
  join(import.meta.dir, '..', 'product-proxy.ts'),
  '--upstream',
  mockUrl,
  '--work',
  'product',
  '--bodies',
  bodies,
];

const startFloorTargets = async (
  mockUrl: string,
  cores: Cores,
  started: Started,
): Promise<{ targets: Target[]; floorStatus: Targets['floorStatus'] }> => {
  const targets: Target[] = [];
  try {
    for (const name of FLOOR_TARGETS) {
      const s = await spawnService(name, pinned(cores.server, floorCommand(mockUrl, name === 'floor-json' ? 'json' : 'raw')), {
        ready: /"port":(\d+)/,
      });
      started.services.push(s.service);
      targets.push({ name, url: `http://127.0.0.1:${s.match[1]}`, pid: s.service.pid, requests: floorRequests });
    }
    return {
      targets,
      floorStatus: {
        status: 'ran',
        message:
          '`bench/product-proxy.ts --work product` with `--bodies json` and `--bodies raw`, on the server core; the cheaper (higher req/s) of the two is the floor',
      },
    };
  } catch (e) {
    return { targets: [], floorStatus: { status: 'failed', message: `product floor skipped: ${reason(e)}` } };
  }
};

export const startTargets = async (o: TargetOptions, cores: Cores, started: Started, log: (s: string) => void): Promise<Targets> => {
  // Mock upstream and bare proxy.
  const mockStart = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, '..', 'mock-upstream.ts')]), {
    ready: /"port":(\d+)/,
  });
  started.services.push(mockStart.service);
  const mockUrl = `http://127.0.0.1:${mockStart.match[1]}`;
  const bareStart = await spawnService(
    'bare',
    pinned(cores.server, ['bun', join(import.meta.dir, '..', 'bare-proxy.ts'), '--upstream', mockUrl]),
    { ready: /"port":(\d+)/ },
  );
  started.services.push(bareStart.service);
  const floor = o.floor
    ? await startFloorTargets(mockUrl, cores, started)
    : { targets: [], floorStatus: { status: 'skipped' as const, message: 'not run (--no-floor)' } };
  if (o.floor) log(`floor: ${floor.floorStatus.message}`);

  // The gateway, on a provisioned store.
  const store = await prepareStore({ mock: mockUrl, cpu: cores.server, fresh: o.fresh, log });
  const gw = await launchGateway(store.setup, { cpu: cores.server });
  started.services.push(gw.service);
  if (store.source === 'template') await repoint(gw, mockUrl);
  log(`gateway: started in ${(gw.startMs / 1000).toFixed(1)} s on ${store.setup.dataDir}`);

  const { peer, peerStatus } = await startPeerTarget(o, cores, started);
  log(`peer: ${peerStatus.message}`);
  const { pg, pgStatus } = o.postgres
    ? await startPostgresTarget(o.postgres, mockUrl, cores, started, log)
    : { pg: undefined, pgStatus: { status: 'skipped' as const, message: 'not run (--postgres adds it)' } };
  if (o.postgres) log(`postgres: ${pgStatus.message}`);
  const { dp, dpStatus } = o.dataplane
    ? await startDataplaneTarget(mockUrl, cores, started, log)
    : { dp: undefined, dpStatus: { status: 'skipped' as const, message: 'not run (--no-dataplane)' } };
  if (o.dataplane) log(`dataplane: ${dpStatus.message}`);

  const targets: Target[] = [
    { name: 'direct', url: mockUrl, pid: mockStart.service.pid, requests: upstreamRequests },
    { name: 'bare', url: `http://127.0.0.1:${bareStart.match[1]}`, pid: bareStart.service.pid, requests: upstreamRequests },
    ...floor.targets,
    {
      name: 'gateway',
      url: gw.url,
      pid: gw.service.pid,
      // failing-primary's route is in the bench customer's `resilient` project (circuit breakers on).
      requests: (k) => gatewayRequests(k, k === 'failing-primary' ? [store.resilientKey] : store.keys),
    },
  ];
  if (pg) targets.push({ name: 'gateway-pg', url: pg.gw.url, pid: pg.gw.service.pid, requests: (k) => gatewayRequests(k, pg.keys) });
  if (dp) targets.push({ name: 'dataplane', url: dp.url, pid: dp.pid, requests: (k) => gatewayRequests(k, dp.keys) });
  if (peer) targets.push({ name: 'portkey', url: peer.url, pid: peer.service.pid, requests: (k) => peerRequests(k, mockUrl) });
  return { targets, mockUrl, store, gw, peer, peerStatus, pg, pgStatus, dp, dpStatus, floorStatus: floor.floorStatus };
};
