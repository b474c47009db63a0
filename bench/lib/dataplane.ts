/**
 * The lean deployment: a separate data plane (`serve --role data`, no database, no management
 * modules) serving the bench customer of a management plane `mp`. It pulls its configuration from
 * there and ships its request records there (the management plane writes them to its store). The
 * bench runs `mp` on the load core (bench/run.ts, bench/dp-profile.ts): in a deployment the data
 * plane's machine runs nothing else, and the management plane's work on the records it receives
 * takes from the load side, not from the data plane's figures.
 * `BENCH_DATAPLANE_BUN_ARGS` adds Bun flags to the data plane (e.g. `--cpu-prof-md --cpu-prof-dir=DIR`).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BENCH_CUSTOMER, type LaunchedGateway, scratchDir } from './gateway.ts';
import { DATAPLANE_JSC_RAM_SIZE, pinned, ramSizeEnv, type Service, spawnService } from './proc.ts';
import { gatewayRequests } from './requests.ts';

const ROOT = resolve(import.meta.dir, '..', '..');

export interface RunningDataplane {
  service: Service;
  url: string;
  /** From spawn to the first request it answered 200 (its configuration pulled). */
  startMs: number;
}

/** Creates a workspace and a service account for it on `mp`, starts the data plane, waits until it serves `key`. */
export const startDataplane = async (
  mp: LaunchedGateway,
  cpu: string | undefined,
  key: string,
  extraEnv: Record<string, string> = {},
  /** Another checkout to run, and Bun flags for it (bench/ab.ts --target=dataplane). */
  side: { root?: string; bunArgs?: string[] } = {},
): Promise<RunningDataplane> => {
  const workspaceId = `bench-dp-${randomBytes(4).toString('hex')}`;
  await mp.call('/admin.v1.AdminService/CreateWorkspace', { customerId: BENCH_CUSTOMER, workspaceId, projectId: 'default' });
  const account = await mp.call('/admin.v1.AdminService/CreateServiceAccount', {
    customerId: BENCH_CUSTOMER,
    workspaceId,
    apiUri: mp.adminUrl,
  });
  const dir = scratchDir('bench-dp-');
  const file = join(dir, 'service-account.json');
  writeFileSync(file, JSON.stringify(account), { mode: 0o600 });
  const t0 = performance.now();
  const { service, match } = await spawnService(
    'dataplane',
    pinned(cpu, [
      'bun',
      ...(side.bunArgs ?? process.env.BENCH_DATAPLANE_BUN_ARGS?.split(' ').filter(Boolean) ?? []),
      join(side.root ?? ROOT, 'src/main.ts'),
      'serve',
      '--role',
      'data',
      '--service-account',
      file,
    ]),
    {
      cwd: side.root ?? ROOT,
      env: {
        GATEWAY_PORT: '0',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: join(dir, 'data'),
        GATEWAY_LOG_LEVEL: 'warn',
        DATABASE_URL: undefined,
        ...ramSizeEnv(DATAPLANE_JSC_RAM_SIZE),
        ...extraEnv,
      },
      ready: /inference API on (http:\/\/\S+)\/v1/,
      timeoutMs: 60_000,
    },
  );
  const url = match[1] as string;
  const probe = gatewayRequests('chat-json', [key])[0];
  if (!probe) throw new Error('no chat-json request for the data plane probe');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${url}${probe.path}`, { method: 'POST', headers: probe.headers, body: probe.body });
    await res.arrayBuffer();
    if (res.status === 200) break;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`the data plane did not serve the bench key within 60 s (last status ${res.status})`);
    }
    await Bun.sleep(50);
  }
  return { service, url, startMs: performance.now() - t0 };
};
