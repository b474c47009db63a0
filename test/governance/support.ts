import { spawn, type Subprocess } from 'bun';
import type { TestGateway } from '../support/gateway.ts';
import { admin, apikeyOp } from '../support/gateway.ts';
import { freePort } from '../support/throwaway-pg.ts';

export { freePort };

export interface TestRedis {
  url: string;
  stop(): void;
}

/** Why Redis tests cannot run here, or undefined. */
export const redisUnavailable = (): string | undefined =>
  process.env.TEST_REDIS_URL || Bun.which('redis-server') ? undefined : 'no TEST_REDIS_URL and no redis-server binary on PATH';

/** TEST_REDIS_URL (CI), else a redis-server of the test's own on a free port, without persistence. */
export const startRedis = async (): Promise<TestRedis> => {
  if (process.env.TEST_REDIS_URL) return { url: process.env.TEST_REDIS_URL, stop: () => {} };
  return startOwnRedis();
};

/** A redis-server of the test's own (its command statistics and its process are the test's alone). */
export const startOwnRedis = async (): Promise<TestRedis & { proc: Subprocess }> => {
  const port = await freePort();
  const proc: Subprocess = spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdout: 'ignore',
    stderr: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then(
      (s) => {
        s.end();
        return true;
      },
      () => false,
    );
    if (ok) break;
    await Bun.sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, proc, stop: () => proc.kill() };
};

export interface World {
  customerId: string;
  projectId: string;
  apiKey: string;
  keyId: string;
}

export interface WorldOptions {
  /** USD per million tokens (default 0 input, 1 output). */
  prices?: { input: number; output: number };
  /** Appended to the model names (catalog models are shared: a second world in one gateway needs its own). */
  suffix?: string;
}

/**
 * A customer and project with the model `metered` on the mock OpenAI upstream, priced (by default)
 * 0 per input token and 1 USD per million output tokens (so a request's cost is its output tokens ×
 * 1000 nano-USD), and `claude-mini` on the mock Anthropic upstream.
 */
export const meteredWorld = async (
  tg: TestGateway,
  openaiUrl: string,
  anthropicUrl: string,
  customerId = 'gov',
  options: WorldOptions = {},
): Promise<World> => {
  const prices = options.prices ?? { input: 0, output: 1 };
  const suffix = options.suffix ?? '';
  const projectId = 'default';
  await tg.must(admin('CreateCustomer'), { customerId, name: 'Governed' });
  for (const [name, provider, upstream, base] of [
    ['metered', 'openai', 'gpt-4o-mini', `${openaiUrl}/v1`],
    ['claude-mini', 'anthropic', 'claude-haiku-4-5', anthropicUrl],
  ] as const) {
    const model = `${name}${suffix}`;
    const created = (await tg.must(admin('CreateModel'), {
      model,
      provider,
      mode: 'chat',
      capabilities: ['chat'],
      contextWindow: 128000,
      maxOutputTokens: 1000,
      inputPricePerMillion: prices.input,
      outputPricePerMillion: prices.output,
    })) as { model: { id: string } };
    await tg.must(admin('AddProjectModel'), { customerId, projectId, modelId: created.model.id });
    await tg.must(admin('CreateProviderConnection'), {
      customerId,
      projectId,
      name: `mock-${provider}`,
      provider,
      baseUrl: base,
      apiKey: 'sk-upstream',
    });
    await tg.must(admin('CreateRoute'), { customerId, projectId, model, targets: [{ connection: `mock-${provider}`, model: upstream }] });
  }
  const key = (await tg.must(apikeyOp('CreateApiKey'), { name: 'gov', userId: 'u1', enterpriseContext: { customerId, projectId } })) as {
    apiKey: string;
    id: string;
  };
  return { customerId, projectId, apiKey: key.apiKey, keyId: key.id };
};

export const chat = (url: string, apiKey: string, body: Record<string, unknown>): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Waits until the next minute when fewer than `marginMs` are left in the current one (fixed windows). */
export const awayFromMinuteEdge = async (marginMs = 8000): Promise<void> => {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await Bun.sleep(left + 50);
};
