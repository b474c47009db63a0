import type { AgentCard } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';

/**
 * A real A2A agent built with `@a2a-js/sdk`'s server pieces (DefaultRequestHandler and the
 * JSON-RPC transport handler, the same ones its Express adapter mounts) on a plain Bun listener:
 * it answers `echo: <text>` as a completed task, and streams a task, one artifact per word and a
 * completed status. It records the headers of every call (to see what the gateway sends), can be
 * told to hang, to answer garbage, to break its stream or to stream slowly (300 ms between events), and serves its card at
 * `/.well-known/agent-card.json` (the card can be swapped, to see drift).
 */

export interface TestAgent {
  url: string;
  cardUrl: string;
  /** Headers of the JSON-RPC calls received, newest last. */
  calls: Headers[];
  mode: 'normal' | 'hang' | 'garbage' | 'break' | 'slow';
  /** The SDK request handler behind every binding the agent serves (one task store). */
  requests(): DefaultRequestHandler;
  /** Replaces the served card's description (the pinned hash no longer matches). */
  swapCard(description: string): void;
  stop(): Promise<void>;
}

const textOf = (parts: readonly { content?: { $case: string; value: unknown } }[]): string =>
  parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

const executor: AgentExecutor = {
  async execute(ctx, bus) {
    const text = textOf(ctx.userMessage.parts);
    const base = { id: ctx.taskId, contextId: ctx.contextId, artifacts: [], history: [ctx.userMessage], metadata: undefined };
    bus.publish(AgentEvent.task({ ...base, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined } }));
    const words = text.split(' ');
    for (const [i, w] of words.entries())
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: {
            artifactId: `a${i}`,
            name: 'word',
            description: '',
            parts: [{ content: { $case: 'text', value: `echo: ${w}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: i === words.length - 1,
          metadata: undefined,
        }),
      );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
};

/** `bearer`: the credential the agent requires; `onCall`: what the agent does before it answers a call (its own model or tool calls). */
export interface TestAgentOptions {
  bearer?: string;
  onCall?: (headers: Headers) => Promise<void>;
  /** The agent's HTTP+JSON URL (served elsewhere, on the same request handler): the card lists it after JSON-RPC. */
  restUrl?: string;
}

export const startTestAgent = (name = 'Echo agent', opts: TestAgentOptions = {}): TestAgent => {
  let description = 'Echoes what it is told';
  const cardOf = (origin: string): AgentCard => ({
    name,
    description,
    supportedInterfaces: [
      { url: `${origin}/rpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      ...(opts.restUrl ? [{ url: opts.restUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' }] : []),
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'echoes',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  });
  let handler: JsonRpcTransportHandler | undefined;
  let legacy: LegacyJsonRpcTransportHandler | undefined;
  let requests: DefaultRequestHandler | undefined;
  const agent: TestAgent = {
    url: '',
    cardUrl: '',
    calls: [],
    mode: 'normal',
    requests() {
      requests ??= new DefaultRequestHandler(cardOf(agent.url), new InMemoryTaskStore(), executor);
      return requests;
    },
    swapCard(d) {
      description = d;
    },
    stop: async () => {
      server.stop(true);
    },
  };
  const enc = new TextEncoder();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/.well-known/agent-card.json') return Response.json(cardOf(url.origin));
      if (url.pathname !== '/rpc' || req.method !== 'POST') return new Response('not found', { status: 404 });
      agent.calls.push(req.headers);
      if (opts.bearer && req.headers.get('authorization') !== `Bearer ${opts.bearer}`) return new Response('unauthorized', { status: 401 });
      if (agent.mode === 'hang') return new Promise<Response>(() => undefined);
      await opts.onCall?.(req.headers);
      if (agent.mode === 'garbage') return new Response('<html>oops</html>', { headers: { 'content-type': 'text/html' } });
      handler ??= new JsonRpcTransportHandler(agent.requests());
      legacy ??= new LegacyJsonRpcTransportHandler(agent.requests());
      // As the SDK's Express adapter: no A2A-Version header (or 0.3) is a v0.3 client.
      const version = req.headers.get('a2a-version') ?? '0.3';
      const body = await req.text();
      const context = defaultServerCallContextBuilder({
        extensions: undefined,
        user: new UnauthenticatedUser(),
        headers: Object.fromEntries(req.headers),
        requestedVersion: version,
      });
      const out = await (version === '0.3' ? legacy : handler).handle(body, context);
      if (!(Symbol.asyncIterator in out)) return Response.json(out);
      const mode = agent.mode;
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          let n = 0;
          for await (const ev of out) {
            if (mode === 'slow' && n++ > 0) await Bun.sleep(300);
            c.enqueue(enc.encode(`data: ${JSON.stringify(ev)}\n\n`));
            if (mode === 'break' && ++n === 2) {
              // After the headers and two events are out: the connection breaks mid-stream.
              await Bun.sleep(100);
              c.error(new Error('agent crashed'));
              return;
            }
          }
          c.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  agent.url = `http://127.0.0.1:${server.port}`;
  agent.cardUrl = `${agent.url}/.well-known/agent-card.json`;
  return agent;
};
