/**
 * Canonical request → Ollama native `/api/chat`. Sampling lives in `options`
 * (`num_predict` for the output limit); images are bare base64 strings (data URLs only); tool-call
 * arguments are objects; tool results name their function in `tool_name`. `stream` is always
 * sent, because Ollama streams by default. There is no `tool_choice`: `none` drops the tools, the
 * other choices are left to the model.
 */
import { assertModelReasons, reasoningEffortOf } from '../reasoning.ts';
import type { CanonicalRequest, JsonObject, Message } from '../../canonical/types.ts';
import { textOf } from '../../canonical/types.ts';
import { compact, optionHeaders, setHeader, trimTrailingSlash } from '../json.ts';
import { argumentsObject, refuseDocuments, refuseStrictTools, requireDataUrl, toolNamesById, toolResultName } from '../mapping.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';

export const OLLAMA_DEFAULT_BASE_URL = 'http://localhost:11434';

const toWire = (provider: string, m: Message, names: ReadonlyMap<string, string>): JsonObject => {
  refuseDocuments(m.content, `Provider '${provider}' reads no documents (PDF files).`);
  switch (m.role) {
    case 'system':
      return { role: 'system', content: textOf(m.content) };
    case 'user': {
      const images = m.content.flatMap((p) => (p.type === 'image' ? [requireDataUrl(p.url, provider).data] : []));
      return compact({ role: 'user', content: textOf(m.content), images: images.length > 0 ? images : undefined });
    }
    case 'assistant': {
      const calls = m.toolCalls ?? [];
      return compact({
        role: 'assistant',
        content: textOf(m.content),
        tool_calls:
          calls.length > 0 ? calls.map((c) => ({ function: { name: c.name, arguments: argumentsObject(c.arguments) } })) : undefined,
      });
    }
    case 'tool':
      return { role: 'tool', content: textOf(m.content), tool_name: toolResultName(m, names) };
  }
};

export const buildOllamaBody = (provider: string, request: CanonicalRequest, target: UpstreamTarget): JsonObject => {
  assertModelReasons(request);
  refuseStrictTools(request, 'Ollama', 'its tools have no strict mode');
  const effort = reasoningEffortOf(request);
  const names = toolNamesById(request.messages);
  const tools = request.toolChoice === 'none' ? [] : (request.tools ?? []);
  const rf = request.responseFormat;
  const options = compact({
    num_predict: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    top_k: request.topK,
    stop: request.stop && request.stop.length > 0 ? request.stop : undefined,
    seed: request.seed,
    presence_penalty: request.presencePenalty,
    frequency_penalty: request.frequencyPenalty,
  });
  return compact({
    model: target.upstreamModel,
    messages: request.messages.map((m) => toWire(provider, m, names)),
    stream: request.stream,
    tools:
      tools.length > 0
        ? tools.map((t) => ({
            type: 'function',
            function: compact({ name: t.name, description: t.description, parameters: t.parameters }),
          }))
        : undefined,
    format: rf === undefined || rf.type === 'text' ? undefined : rf.type === 'json_schema' ? rf.schema : 'json',
    options: Object.keys(options).length > 0 ? options : undefined,
    think: effort === undefined ? undefined : effort !== 'minimal',
  });
};

export const buildOllamaRequest = (provider: string, request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // No auth by default; a key is sent as bearer for servers behind an authenticating proxy.
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['authorization'] = `Bearer ${connection.apiKey}`;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  const base = connection.baseUrl !== undefined && connection.baseUrl !== '' ? connection.baseUrl : OLLAMA_DEFAULT_BASE_URL;
  return {
    url: `${trimTrailingSlash(base)}/api/chat`,
    method: 'POST',
    headers,
    body: JSON.stringify(buildOllamaBody(provider, request, target)),
  };
};
