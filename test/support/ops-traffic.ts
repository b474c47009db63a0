import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { admin } from './gateway.ts';
import { connectMcp } from './mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from './mcp-servers.ts';
import { startWorld, stopWorld, type World } from './provision.ts';

/**
 * The shipped dashboard and alert rules (deploy/grafana/gateway.json, deploy/prometheus/alerts.yml)
 * read as data, and a gateway with traffic that makes every metric they query appear on its
 * `/metrics`: used by test/ops-dashboards.test.ts and bench/dashboard-queries.ts (which renders the
 * queries against a real Prometheus scraping this gateway).
 */

const ROOT = join(import.meta.dir, '..', '..');
export const DASHBOARD_FILE = join(ROOT, 'deploy', 'grafana', 'gateway.json');
export const ALERTS_FILE = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');

export interface Query {
  /** The panel title or the alert name. */
  source: string;
  expr: string;
  legend?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Every query of the dashboard's panels (rows excluded), in panel order. */
export const dashboardQueries = (): Query[] => {
  const d: unknown = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
  if (!isRecord(d)) throw new Error('the dashboard is not a JSON object');
  return records(d.panels)
    .filter((p) => p.type !== 'row')
    .flatMap((p) =>
      records(p.targets).map((t) => {
        const legend = str(t.legendFormat);
        return { source: str(p.title) ?? '', expr: str(t.expr) ?? '', ...(legend ? { legend } : {}) };
      }),
    );
};

/** Every rule expression of the alert rules file. */
export const alertQueries = (): Query[] => {
  const doc: unknown = Bun.YAML.parse(readFileSync(ALERTS_FILE, 'utf8'));
  if (!isRecord(doc)) throw new Error('the alert rules are not a YAML mapping');
  return records(doc.groups).flatMap((g) => records(g.rules).map((r) => ({ source: str(r.alert) ?? '', expr: str(r.expr) ?? '' })));
};

/** Metric names a query reads (`_bucket`/`_sum`/`_count` of a histogram named by its family). */
export const metricsOf = (expr: string): string[] => {
  // Label matchers and grouping clauses name labels, not metrics.
  const bare = expr.replace(/\{[^}]*\}/g, '').replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = bare.match(/\b(?:gen_ai|gateway|process)_[a-z0-9_]+/g) ?? [];
  return [...new Set(names.map((n) => n.replace(/_(bucket|sum|count)$/, '')))];
};

export interface OpsWorld {
  world: World;
  alpha: TestMcpServer;
  metricsUrl: string;
  stop(): Promise<void>;
}

/** A gateway (real listeners, mock upstreams, the `acme` project) with its metrics listener on `metricsPort`, and an MCP profile `tools` fronting an SDK server. */
export const startOpsWorld = async (metricsPort: number, env: Record<string, string> = {}): Promise<OpsWorld> => {
  const world = await startWorld({ GATEWAY_METRICS_PORT: String(metricsPort), ...env });
  const alpha = startStreamableServer('a', { bearer: 'alpha-secret' });
  const acme = { customerId: 'acme', projectId: 'default' };
  await world.tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: alpha.url, authType: 'bearer', authValue: 'alpha-secret' });
  await world.tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'alpha' });
  await world.tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'tools', servers: [{ serverId: 'alpha', prefix: 'alpha' }] });
  return {
    world,
    alpha,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    stop: async () => {
      await stopWorld(world);
      await alpha.stop();
    },
  };
};

/**
 * One round of traffic: Chat Completions (plain, streamed, and one the upstream fails with a 500),
 * a streamed Messages request, a streamed Responses request with a hosted MCP tool, and a direct
 * MCP tool call; `rounds` times.
 */
export const sendOpsTraffic = async (o: OpsWorld, rounds = 1): Promise<void> => {
  const { tg, oa, p } = o.world;
  const post = (path: string, body: unknown) =>
    fetch(`${tg.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    }).then((r) => r.text());
  const messages = [{ role: 'user', content: 'hi' }];
  const sdk = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
  const tool = { type: 'mcp' as const, server_label: 'docs', server_url: `${tg.url}/mcp/tools`, require_approval: 'never' as const };
  const { client } = await connectMcp(`${tg.url}/mcp/tools`, p.apiKey);
  try {
    for (let i = 0; i < rounds; i++) {
      oa.script((req) =>
        String(JSON.stringify(req.body)).includes('please fail')
          ? { status: 500, errorBody: '{"error":{"message":"upstream broke","type":"server_error"}}' }
          : { text: 'a b c d e f', usage: { input: 12, output: 6 } },
      );
      await post('/v1/chat/completions', { model: 'gpt-mini', messages });
      await post('/v1/chat/completions', { model: 'gpt-mini', stream: true, messages });
      await post('/v1/chat/completions', { model: 'gpt-mini', messages: [{ role: 'user', content: 'please fail' }] });
      await post('/v1/messages', { model: 'claude-mini', max_tokens: 100, stream: true, messages });
      const stream = sdk.responses.stream({ model: 'claude-mini', input: 'call alpha__echo {"text":"hi"}', tools: [tool] });
      for await (const _ of stream) {
        // drained
      }
      await client.callTool({ name: 'alpha__echo', arguments: { text: 'direct' } });
    }
  } finally {
    oa.script(undefined);
    await client.close();
  }
};
