import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { eventually, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';

/**
 * Contract §7.1 telemetry: MCP spans carry the MCP conventions (`mcp.method.name`,
 * `mcp.protocol.version`, `mcp.session.id` for the 2025 generation, `jsonrpc.request.id`,
 * `gen_ai.tool.name`, `gen_ai.operation.name` = `execute_tool` for tool calls, `error.type`) and
 * never `gen_ai.request.model` nor `gen_ai.provider.name`; the histogram
 * `mcp_server_operation_duration_seconds` beside `gateway_mcp_calls_total`.
 */

let tg: TestGateway;
let up: TestMcpServer;
let otlp: OtlpReceiver;
let apiKey: string;
let metricsUrl: string;
const acme = { customerId: 'acme', projectId: 'default' };

beforeAll(async () => {
  otlp = startOtlpReceiver();
  up = startStreamableServer('a', {});
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  tg = await startTestGateway({
    GATEWAY_METRICS_PORT: String(port),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = ((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', enterpriseContext: acme })) as { apiKey: string }).apiKey;
  await tg.must(admin('CreateMcpServer'), { serverId: 'a', url: up.url });
  await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'a' });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 't', servers: [{ serverId: 'a' }] });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  await up?.stop();
  otlp?.stop();
});

describe('MCP telemetry by the MCP semantic conventions', () => {
  test('spans of both generations: MCP attributes, no model or provider', async () => {
    const { client, transport } = await connectMcp(`${tg.url}/mcp/t`, apiKey);
    expect(textOf(await client.callTool({ name: 'a__echo', arguments: { text: '2025' } }))).toBe('a:2025');
    await client.getPrompt({ name: 'a__greet', arguments: { who: 'x' } });
    const sessionId = transport.sessionId;
    await client.close();
    const modern = new ClientV2({ name: 'm', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new TransportV2(new URL(`${tg.url}/mcp/t`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    expect(textOf(await modern.callTool({ name: 'a__echo', arguments: { text: '2026' } }))).toBe('a:2026');
    await modern.close();

    const mcpSpans = await eventually(() => {
      const s = otlp.spans.filter((x) => x.attributes['mcp.method.name'] !== undefined);
      return s.length >= 5 ? s : undefined;
    });
    for (const s of mcpSpans) {
      expect(s.attributes['gen_ai.request.model']).toBeUndefined();
      expect(s.attributes['gen_ai.provider.name']).toBeUndefined();
    }
    const servers = mcpSpans.filter((s) => s.kind === 2);
    const call2025 = servers.find(
      (s) => s.attributes['mcp.protocol.version'] === '2025-11-25' && s.attributes['mcp.method.name'] === 'tools/call',
    );
    expect(call2025?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'a__echo',
      'mcp.session.id': sessionId ?? '',
    });
    expect(call2025?.attributes['jsonrpc.request.id']).toBeString();
    const prompt = servers.find((s) => s.attributes['mcp.method.name'] === 'prompts/get');
    expect(prompt?.attributes['gen_ai.operation.name']).toBeUndefined();
    const call2026 = servers.find((s) => s.attributes['mcp.protocol.version'] === '2026-07-28');
    expect(call2026?.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'a__echo' });
    expect(call2026?.attributes['mcp.session.id']).toBeUndefined();
    // The upstream (client) span: the name at the server.
    const upstream = mcpSpans.find((s) => s.kind === 3 && s.attributes['mcp.method.name'] === 'tools/call');
    expect(upstream?.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo' });
  });

  test('mcp_server_operation_duration_seconds beside gateway_mcp_calls_total, by method and tool, no model label', async () => {
    const { client } = await connectMcp(`${tg.url}/mcp/t`, apiKey);
    await client.callTool({ name: 'a__echo', arguments: { text: 'm' } });
    await client.close();
    const text = await (await fetch(metricsUrl)).text();
    const lines = text.split('\n');
    expect(lines.some((l) => l.startsWith('gateway_mcp_calls_total{'))).toBe(true);
    const count = lines.find(
      (l) =>
        l.startsWith('mcp_server_operation_duration_seconds_count{') &&
        l.includes('mcp_method_name="tools/call"') &&
        l.includes('gen_ai_tool_name="a__echo"'),
    );
    expect(count).toBeDefined();
    expect(Number(count?.split(' ').at(-1))).toBeGreaterThanOrEqual(1);
    expect(lines.some((l) => l.includes('mcp_server_operation_duration_seconds') && l.includes('gen_ai_request_model'))).toBe(false);
  });
});
