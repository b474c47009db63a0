/**
 * The peer: Portkey's open-source gateway from npm (`@portkey-ai/gateway`), run on Bun against the
 * same mock upstream. Optional: it is looked for in $PORTKEY_DIR (default: $TMPDIR/portkey-peer,
 * where `bash bench/peer/setup.sh` installs it, outside the repository) and skipped with a message
 * when absent. Nothing is installed by the benchmark itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinned, type Service, spawnService } from './proc.ts';

export const peerDir = (): string => process.env.PORTKEY_DIR || join(tmpdir(), 'portkey-peer');

export interface PeerInfo {
  entry: string;
  version: string;
  honoNodeServer: string | undefined;
}

export const findPeer = (): PeerInfo | undefined => {
  const dir = peerDir();
  const pkgDir = join(dir, 'node_modules', '@portkey-ai', 'gateway');
  const entry = join(pkgDir, 'build', 'start-server.js');
  if (!existsSync(entry)) return undefined;
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const honoFile = join(dir, 'node_modules', '@hono', 'node-server', 'package.json');
  const honoNodeServer = existsSync(honoFile) ? (JSON.parse(readFileSync(honoFile, 'utf8')) as { version: string }).version : undefined;
  return { entry, version, honoNodeServer };
};

export const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
};

export interface RunningPeer {
  service: Service;
  url: string;
  info: PeerInfo;
}

export const startPeer = async (info: PeerInfo, cpu: string | undefined): Promise<RunningPeer> => {
  const port = freePort();
  const { service } = await spawnService('portkey', pinned(cpu, ['bun', info.entry, `--port=${port}`, '--headless']), {
    cwd: peerDir(),
    env: { NODE_ENV: 'production' },
    ready: /Ready for connections|running at/i,
    timeoutMs: 30_000,
  });
  // It prints "running at" just before it listens; wait until it answers.
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(`${url}/`, { method: 'GET' });
      break;
    } catch {
      await Bun.sleep(100);
    }
  }
  return { service, url, info };
};

/** Portkey's per-request routing headers: provider and upstream base URL travel with the request. */
export const peerHeaders = (mockBase: string): Record<string, string> => ({
  'x-portkey-provider': 'openai',
  'x-portkey-custom-host': `${mockBase}/v1`,
  authorization: 'Bearer sk-upstream-bench-openai',
});
