/**
 * Pieces of the hand-written MCP 2026-07-28 servers some tests run where the SDK would refuse to
 * send what they need (results without `resultType`, input requests a client cannot give).
 */

/** A JSON-RPC message as an `application/json` answer. */
export const jsonAnswer = (body: unknown): Response =>
  new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

/** The result of `server/discover` for a server that speaks 2026-07-28 only; `resultType` only when given. */
export const discoverResult = (name: string, resultType?: 'complete') => ({
  ...(resultType ? { resultType } : {}),
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {} },
  ttlMs: 0,
  cacheScope: 'private',
  _meta: { 'io.modelcontextprotocol/serverInfo': { name, version: '0' } },
});
