import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's own client on a gateway profile (configured through the management API by the tests). */
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
        const method =
          typeof parsed === 'object' && parsed !== null && 'method' in parsed && typeof parsed.method === 'string' ? parsed.method : '';
        requestIds.push({ method, id });
      }
      return res;
    },
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' }, { capabilities: opts.sampling ? { sampling: {} } : {} });
  if (opts.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      model: 'test',
      content: { type: 'text', text: 'sampled-by-client' },
    }));
  await client.connect(transport);
  return { client, transport, requestIds };
};

export const textOf = (result: unknown): string => {
  if (typeof result !== 'object' || result === null) return '';
  const content: unknown = Reflect.get(result, 'content');
  if (!Array.isArray(content)) return '';
  return content
    .map((c: unknown) =>
      typeof c === 'object' && c !== null && typeof Reflect.get(c, 'text') === 'string' ? String(Reflect.get(c, 'text')) : '',
    )
    .join('');
};
