import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ConfigDocument } from '../../src/api/config-document.ts';
import { mcpSnapshotOf } from '../../src/propagation/mcp.ts';
import type { TestGateway } from './gateway.ts';

/**
 * MCP configuration for tests, until the management operations (CreateMcpServer,
 * AddProjectMcpServer, CreateMcpProfile) land: the document's MCP sections are built by the real
 * snapshot builder (propagation/mcp.ts) and put into the served snapshot. Call `apply` again after
 * any management change (the next snapshot is built from the store, without them). Switching to
 * the management API means replacing `apply` with those calls.
 */
export type McpSections = Required<Pick<ConfigDocument, 'mcpServers' | 'mcpProfiles'>>;

export const applyMcp = async (tg: TestGateway, sections: McpSections): Promise<void> => {
  await tg.settle();
  const current = tg.gw.snapshots.current;
  if (!current) throw new Error('no snapshot');
  tg.gw.snapshots.swap({ ...current, mcp: mcpSnapshotOf(sections) });
};

/** The project's row id (profiles attach by it). */
export const projectUuid = (tg: TestGateway, customerId: string, projectId: string): string => {
  const p = tg.gw.snapshots.current?.projects.get(`${customerId}/${projectId}`);
  if (!p) throw new Error(`no project ${customerId}/${projectId}`);
  return p.id;
};

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** X-Request-ID of each POST by the JSON-RPC method it carried. */
  requestIds: { method: string; id: string }[];
}

/** The SDK's own client on `/mcp/{profileId}`, answering sampling requests with "sampled-by-client". */
export const connectMcp = async (url: string, credential: string | undefined, opts: { sampling?: boolean } = {}): Promise<Connected> => {
  const requestIds: Connected['requestIds'] = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: credential ? { authorization: `Bearer ${credential}` } : {} },
    fetch: async (u, init) => {
      const res = await fetch(u, init);
      const id = res.headers.get('x-request-id');
      if (id && typeof init?.body === 'string') {
        const parsed: unknown = JSON.parse(init.body);
        const method = typeof parsed === 'object' && parsed !== null && 'method' in parsed && typeof parsed.method === 'string' ? parsed.method : '';
        requestIds.push({ method, id });
      }
      return res;
    },
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' }, { capabilities: opts.sampling ? { sampling: {} } : {} });
  if (opts.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'test', content: { type: 'text', text: 'sampled-by-client' } }));
  await client.connect(transport);
  return { client, transport, requestIds };
};

export const textOf = (result: unknown): string => {
  if (typeof result !== 'object' || result === null) return '';
  const content: unknown = Reflect.get(result, 'content');
  if (!Array.isArray(content)) return '';
  return content.map((c: unknown) => (typeof c === 'object' && c !== null && typeof Reflect.get(c, 'text') === 'string' ? String(Reflect.get(c, 'text')) : '')).join('');
};
