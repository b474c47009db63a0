import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import type { ResponseOutputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { admin } from './support/gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 24 item 6: a Responses request whose `mcp` tool names one of the caller's profiles is run
 * by the gateway for every upstream (the mock Anthropic and OpenAI upstreams here), with the
 * official `openai` SDK: tools listed and offered, calls run through the profile (records as
 * `/mcp` makes them), results fed back, approvals, `allowed_tools`, errors in `mcp_call.error`,
 * streaming events, and a server_url that is not the gateway's keeping today's behaviour.
 */

let w: World;
let alpha: TestMcpServer;
let faulty: { url: string; stop(): void };
const MODELS = [
  ['claude-mini', 'anthropic'],
  ['gpt-mini', 'openai'],
] as const;

/** An SDK server whose `explode` tool answers a JSON-RPC error and whose `fail` tool answers isError. */
const startFaultyServer = (): { url: string; stop(): void } => {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const mcp = new Server({ name: 'faulty', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          { name: 'explode', description: 'Fails with a protocol error', inputSchema: { type: 'object' } },
          { name: 'fail', description: 'Fails as a tool', inputSchema: { type: 'object' } },
        ],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => {
        if (r.params.name === 'explode') throw new McpError(-32050, 'database unavailable');
        return { content: [{ type: 'text', text: 'it broke' }], isError: true };
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      return transport.handleRequest(req);
    },
  });
  return { url: `http://127.0.0.1:${server.port}/mcp`, stop: () => server.stop(true) };
};

beforeAll(async () => {
  w = await startWorld();
  alpha = startStreamableServer('a', { bearer: 'alpha-secret' });
  faulty = startFaultyServer();
  const acme = { customerId: 'acme', projectId: 'default' };
  await w.tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: alpha.url, authType: 'bearer', authValue: 'alpha-secret' });
  await w.tg.must(admin('CreateMcpServer'), { serverId: 'faulty', url: faulty.url });
  for (const serverId of ['alpha', 'faulty']) await w.tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await w.tg.must(admin('CreateMcpProfile'), {
    ...acme,
    profileId: 'tools',
    servers: [{ serverId: 'alpha', prefix: 'alpha', tools: ['echo', 'add'] }],
  });
  await w.tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'broken', servers: [{ serverId: 'faulty', prefix: '' }] });
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  await alpha?.stop();
  faulty?.stop();
});

const sdk = () => new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
const tool = (extra: Record<string, unknown> = {}) => ({
  type: 'mcp' as const,
  server_label: 'docs',
  server_url: `${w.tg.url}/mcp/tools`,
  require_approval: 'never' as const,
  ...extra,
});
const types = (output: ResponseOutputItem[]): string[] => output.map((o) => o.type);
const only = <T extends ResponseOutputItem['type']>(output: ResponseOutputItem[], type: T): Extract<ResponseOutputItem, { type: T }> => {
  const found = output.find((o): o is Extract<ResponseOutputItem, { type: T }> => o.type === type);
  if (!found) throw new Error(`no ${type} item in ${JSON.stringify(output)}`);
  return found;
};

const records = async (query: Record<string, string>): Promise<Record<string, unknown>[]> => {
  for (let i = 0; i < 50; i++) {
    const found = ((await w.tg.must(admin('SearchRequestRecords'), query)) as { records: Record<string, unknown>[] }).records;
    if (found.length > 0) return found;
    await Bun.sleep(50);
  }
  return [];
};

describe('an mcp tool naming a profile of this gateway', () => {
  for (const [model, family] of MODELS) {
    test(`${family}: tools listed, the call run through the profile, its result fed back; usage summed`, async () => {
      const { data: r, response } = await sdk()
        .responses.create({ model, input: 'call alpha__echo {"text":"hi"}', tools: [tool()] })
        .withResponse();
      expect(types(r.output)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
      const list = only(r.output, 'mcp_list_tools');
      expect(list.server_label).toBe('docs');
      expect(list.tools.map((t) => t.name).sort()).toEqual(['alpha__add', 'alpha__echo']);
      const call = only(r.output, 'mcp_call');
      expect(call).toMatchObject({
        server_label: 'docs',
        name: 'alpha__echo',
        arguments: '{"text":"hi"}',
        output: 'a:hi',
        error: null,
        status: 'completed',
      });
      expect(r.output_text).toBe('tool said: a:hi');
      // Two rounds: (20 + 30) in, (9 + 5) out (the mock's usage per round).
      expect(r.usage).toMatchObject({ input_tokens: 50, output_tokens: 14 });
      // The tool call is a record as /mcp makes it, linked to the Responses request by its id.
      const requestId = response.headers.get('x-request-id') ?? '';
      const calls = await records({ clientRequestId: requestId });
      expect(calls.find((c) => c.model === 'tools/call')).toMatchObject({
        endpoint: '/mcp/tools',
        provider: 'mcp',
        connection: 'alpha',
        upstreamModel: 'echo',
        httpStatus: 200,
      });
      // One record for the Responses request, with the summed usage.
      const own = await records({ requestId });
      expect(own.length).toBe(1);
      expect(own[0]).toMatchObject({ endpoint: '/v1/responses', httpStatus: 200, usage: { promptTokens: 50, completionTokens: 14 } });
      // The upstream was offered the profile's tools as functions, never the mcp tool.
      const sent = (family === 'anthropic' ? w.an : w.oa).requests.at(-1)?.body;
      expect(JSON.stringify(sent)).not.toContain('"mcp"');
      expect(JSON.stringify(sent)).toContain('alpha__echo');
    });
  }

  test('a relative server_url names the profile too; allowed_tools filters what is listed and offered', async () => {
    const r = await sdk().responses.create({
      model: 'claude-mini',
      input: 'call alpha__add {"a":2,"b":3}',
      tools: [{ ...tool({ allowed_tools: ['alpha__add'] }), server_url: '/mcp/tools' }],
    });
    expect(only(r.output, 'mcp_list_tools').tools.map((t) => t.name)).toEqual(['alpha__add']);
    expect(only(r.output, 'mcp_call').output).toBe('5');
    const offered = (w.an.requests.at(-1)?.body.tools as { name: string }[] | undefined)?.map((t) => t.name);
    expect(offered).toEqual(['alpha__add']);
  });

  test('a tool outside allowed_tools is not callable even when the model asks for it', async () => {
    const r = await sdk().responses.create({
      model: 'claude-mini',
      input: 'call alpha__echo {"text":"x"}',
      tools: [tool({ allowed_tools: { tool_names: ['alpha__add'] } })],
    });
    // The model called a function the gateway did not offer: it goes back to the client as a function call.
    expect(types(r.output)).toEqual(['mcp_list_tools', 'function_call']);
  });

  for (const [model, family] of MODELS) {
    test(`${family}: require_approval 'always' — an approval request, then the call once approved`, async () => {
      const client = sdk();
      const seen = alpha.seen.length;
      const first = await client.responses.create({
        model,
        input: 'call alpha__echo {"text":"ok?"}',
        tools: [tool({ require_approval: 'always' })],
      });
      expect(types(first.output)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
      const ask = only(first.output, 'mcp_approval_request');
      expect(ask).toMatchObject({ server_label: 'docs', name: 'alpha__echo', arguments: '{"text":"ok?"}' });
      expect(ask.id).toStartWith('mcpr_');
      const callsBefore = alpha.seen.length - seen;
      const second = await client.responses.create({
        model,
        previous_response_id: first.id,
        input: [{ type: 'mcp_approval_response', approve: true, approval_request_id: ask.id }],
        tools: [tool({ require_approval: 'always' })],
      });
      // Listed earlier in the conversation: not listed again.
      expect(types(second.output)).toEqual(['mcp_call', 'message']);
      expect(only(second.output, 'mcp_call')).toMatchObject({ approval_request_id: ask.id, name: 'alpha__echo', output: 'a:ok?' });
      expect(second.output_text).toBe('tool said: a:ok?');
      expect(alpha.seen.length - seen).toBeGreaterThan(callsBefore);
      // A third turn replays the conversation without running the approved call again.
      const before = alpha.seen.length;
      const third = await client.responses.create({
        model,
        previous_response_id: second.id,
        input: 'thanks',
        tools: [tool({ require_approval: 'always' })],
      });
      expect(types(third.output)).toEqual(['message']);
      expect(alpha.seen.length).toBe(before + 1); // the listing only
    });
  }

  test('a denied approval: the call never runs, the model is told', async () => {
    const client = sdk();
    const first = await client.responses.create({
      model: 'claude-mini',
      input: 'call alpha__echo {"text":"no"}',
      tools: [tool({ require_approval: { never: { tool_names: ['alpha__add'] } } })],
    });
    const ask = only(first.output, 'mcp_approval_request');
    const second = await client.responses.create({
      model: 'claude-mini',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approve: false, approval_request_id: ask.id, reason: 'not now' }],
      tools: [tool({ require_approval: 'always' })],
    });
    expect(types(second.output)).toEqual(['message']);
    expect(second.output_text).toContain('The user denied this tool call. Reason: not now');
    const sent = JSON.stringify(w.an.requests.at(-1)?.body);
    expect(sent).toContain('denied');
  });

  test('the rounds are bounded: the 8th upstream request must answer (tool_choice none)', async () => {
    const before = w.an.requests.length;
    w.an.script(() => ({
      toolCall: { id: `toolu_${Math.random().toString(36).slice(2)}`, name: 'alpha__echo', arguments: '{"text":"again"}' },
      usage: { input: 1, output: 1 },
    }));
    try {
      const r = await sdk().responses.create({ model: 'claude-mini', input: 'loop', tools: [tool()] });
      expect(w.an.requests.length - before).toBe(8);
      expect(w.an.requests.at(-1)?.body.tool_choice).toEqual({ type: 'none' });
      expect(w.an.requests.at(-2)?.body.tool_choice).toBeUndefined();
      expect(r.output.filter((o) => o.type === 'mcp_call').length).toBe(8);
      expect(r.usage).toMatchObject({ input_tokens: 8, output_tokens: 8 });
    } finally {
      w.an.script(undefined);
    }
  });

  test('an approval response for an unknown request is a 400', async () => {
    const err = await sdk()
      .responses.create({
        model: 'claude-mini',
        input: [{ type: 'mcp_approval_response', approve: true, approval_request_id: 'mcpr_nope' }],
        tools: [tool()],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String(err)).toContain('mcpr_nope');
  });

  test("an upstream MCP error surfaces in mcp_call.error (JSON-RPC error and a tool's isError)", async () => {
    const broken = { ...tool(), server_label: 'broken', server_url: `${w.tg.url}/mcp/broken` };
    const a = await sdk().responses.create({ model: 'claude-mini', input: 'call explode {}', tools: [broken] });
    expect(only(a.output, 'mcp_call')).toMatchObject({
      name: 'explode',
      output: null,
      status: 'failed',
      error: { type: 'mcp_protocol_error', code: -32050, message: expect.stringContaining('database unavailable') },
    });
    expect(a.output_text).toContain('database unavailable');
    const b = await sdk().responses.create({ model: 'gpt-mini', input: 'call fail {}', tools: [broken] });
    expect(only(b.output, 'mcp_call')).toMatchObject({
      name: 'fail',
      status: 'failed',
      error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'it broke' }] },
    });
  });
});

describe('streamed', () => {
  for (const [model, family] of MODELS) {
    test(`${family}: OpenAI's response.mcp_* events, one response.completed with every item`, async () => {
      const stream = sdk().responses.stream({ model, input: 'call alpha__echo {"text":"streamed"}', tools: [tool()] });
      const events: ResponseStreamEvent[] = [];
      for await (const ev of stream) events.push(ev);
      const final = await stream.finalResponse();
      const names = events.map((e) => e.type);
      for (const t of [
        'response.mcp_list_tools.in_progress',
        'response.mcp_list_tools.completed',
        'response.mcp_call.in_progress',
        'response.mcp_call_arguments.delta',
        'response.mcp_call_arguments.done',
        'response.mcp_call.completed',
      ] as const)
        expect(names).toContain(t);
      expect(names.filter((n) => n === 'response.created').length).toBe(1);
      expect(names.at(-1)).toBe('response.completed');
      const seqs = events.map((e) => e.sequence_number);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(types(final.output)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
      expect(only(final.output, 'mcp_call').output).toBe('a:streamed');
      expect(final.output_text).toBe('tool said: a:streamed');
      expect(final.usage).toMatchObject({ input_tokens: 50, output_tokens: 14 });
      // Item indices are those of the final output.
      const done = events.filter(
        (e): e is Extract<ResponseStreamEvent, { type: 'response.output_item.done' }> => e.type === 'response.output_item.done',
      );
      expect(done.map((d) => [d.output_index, d.item.type])).toEqual([
        [0, 'mcp_list_tools'],
        [1, 'mcp_call'],
        [2, 'message'],
      ]);
    });
  }

  test('an approval request streamed, then approved in a streamed turn', async () => {
    const client = sdk();
    const one = client.responses.stream({
      model: 'claude-mini',
      input: 'call alpha__echo {"text":"s?"}',
      tools: [tool({ require_approval: 'always' })],
    });
    const first = await one.finalResponse();
    const ask = only(first.output, 'mcp_approval_request');
    const two = client.responses.stream({
      model: 'claude-mini',
      previous_response_id: first.id,
      input: [{ type: 'mcp_approval_response', approve: true, approval_request_id: ask.id }],
      tools: [tool()],
    });
    const second = await two.finalResponse();
    expect(types(second.output)).toEqual(['mcp_call', 'message']);
    expect(second.output_text).toBe('tool said: a:s?');
  });
});

describe("a server_url that is not one of the caller's profiles", () => {
  const foreign = {
    type: 'mcp' as const,
    server_label: 'elsewhere',
    server_url: 'https://mcp.example.com/mcp/tools',
    require_approval: 'never' as const,
  };

  test('translated upstream: refused with a 400 as before', async () => {
    const err = await sdk()
      .responses.create({ model: 'claude-mini', input: 'hi', tools: [foreign] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String(err)).toContain("Built-in tool type 'mcp'");
  });

  test('native OpenAI upstream: passed through unchanged', async () => {
    await sdk().responses.create({ model: 'gpt-mini', input: 'hi', tools: [foreign] });
    const sent = w.oa.requests.at(-1);
    expect(sent?.path).toEndWith('/responses');
    expect(sent?.body.tools).toEqual([foreign]);
  });

  test("a profile the caller's project does not have on this gateway is not the gateway's", async () => {
    const err = await sdk()
      .responses.create({ model: 'claude-mini', input: 'hi', tools: [{ ...foreign, server_url: `${w.tg.url}/mcp/missing` }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
