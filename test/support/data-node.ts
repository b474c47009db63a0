import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DataNode, startDataNode } from '../../src/app-data.ts';
import { loadConfig } from '../../src/config/env.ts';
import { admin, type TestGateway } from './gateway.ts';

/**
 * A separate data plane (`--role data`) in this process, on real listeners: a service account of
 * the workspace is created through the management API, written to `dir`, and the node started with
 * it (its data in `dir/node`). `pollInterval` is WORKER_POLL_INTERVAL; `account` adds fields to
 * CreateServiceAccount, `env` variables to the node's environment.
 */
export const startSeparatePlane = async (
  tg: TestGateway,
  dir: string,
  customerId: string,
  workspaceId: string,
  pollInterval: string,
  account: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<DataNode> => {
  const created = await tg.must(admin('CreateServiceAccount'), { customerId, workspaceId, apiUri: tg.adminUrl, ...account });
  const file = join(dir, 'sa.json');
  writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
  return startDataNode(
    loadConfig(['serve', '--role', 'data', '--service-account', file], {
      GATEWAY_PORT: '0',
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: join(dir, 'node'),
      WORKER_POLL_INTERVAL: pollInterval,
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_SHUTDOWN_GRACE: '1s',
      ...env,
    }),
  );
};
