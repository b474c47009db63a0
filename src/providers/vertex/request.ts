/**
 * Vertex AI URLs and bodies. The upstream model name picks the publisher: `claude*` models are
 * Anthropic's (`:rawPredict` / `:streamRawPredict`, the Messages body without `model` and with
 * `anthropic_version`), everything else is Gemini (`:generateContent` /
 * `:streamGenerateContent?alt=sse`, the same body as AI Studio).
 *
 * Host: `https://{location}-aiplatform.googleapis.com/v1`; `https://aiplatform.googleapis.com/v1`
 * for `location: global`; `https://aiplatform.{us|eu}.rep.googleapis.com/v1` for the `us`/`eu`
 * multi-regions. A connection `baseUrl` (the `…/v1` form) replaces it.
 */
import type { CanonicalRequest } from '../../canonical/types.ts';
import { buildMessagesBody } from '../anthropic/request.ts';
import { buildGenerateContentBody, generateContentMethod } from '../gemini/request.ts';
import { documentRefused, NO_URL_FETCH } from '../mapping.ts';
import { optionHeaders, optionString, optionStringList, setHeader, trimTrailingSlash } from '../json.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';
import { providerMisconfigured } from '../upstream-error.ts';
import { parseServiceAccount } from './auth.ts';

export const VERTEX_DEFAULT_LOCATION = 'us-central1';
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export type VertexPublisher = 'google' | 'anthropic';

/** `claude-sonnet-4-5@20250929` → anthropic; `publishers/anthropic/models/…` too; else google. */
export const vertexPublisher = (model: string): VertexPublisher => {
  const m = /^publishers\/([^/]+)\/models\/(.+)$/.exec(model);
  if (m) return m[1] === 'anthropic' ? 'anthropic' : 'google';
  return /^claude/i.test(model) ? 'anthropic' : 'google';
};

const modelName = (model: string): string => model.replace(/^publishers\/[^/]+\/models\//, '');

export const vertexBaseUrl = (target: UpstreamTarget): string => {
  const { connection } = target;
  if (connection.baseUrl !== undefined && connection.baseUrl !== '') return trimTrailingSlash(connection.baseUrl);
  const location = optionString(connection.options, 'location') ?? VERTEX_DEFAULT_LOCATION;
  if (location === 'global') return 'https://aiplatform.googleapis.com/v1';
  if (location === 'us' || location === 'eu') return `https://aiplatform.${location}.rep.googleapis.com/v1`; // multi-region
  return `https://${encodeURIComponent(location)}-aiplatform.googleapis.com/v1`;
};

export const buildVertexRequest = (provider: string, request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest => {
  const { connection } = target;
  const sa = parseServiceAccount(provider, connection);
  const project = optionString(connection.options, 'projectId') ?? sa.projectId;
  if (project === undefined) throw providerMisconfigured(provider, `connection '${connection.name}' needs options.projectId.`);
  const location = optionString(connection.options, 'location') ?? VERTEX_DEFAULT_LOCATION;
  const publisher = vertexPublisher(target.upstreamModel);
  const model = encodeURIComponent(modelName(target.upstreamModel)).replace(/%40/g, '@');
  const prefix = `${vertexBaseUrl(target)}/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers/${publisher}/models/${model}`;

  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.stream) headers['accept'] = 'text/event-stream';
  let url: string;
  let body: string;
  if (publisher === 'anthropic') {
    // Claude on Vertex takes no URL document source (providers.md): refused, not fetched.
    for (const m of request.messages) {
      for (const p of m.content)
        if (p.type === 'document' && p.source.kind === 'url')
          throw documentRefused(p, `Claude on Vertex AI takes no document URL; ${NO_URL_FETCH}.`);
    }
    const messages = buildMessagesBody(request, target);
    delete messages['model']; // the model is in the path
    body = JSON.stringify({
      anthropic_version: optionString(connection.options, 'anthropicVersion') ?? VERTEX_ANTHROPIC_VERSION,
      ...messages,
    });
    url = `${prefix}:${request.stream ? 'streamRawPredict' : 'rawPredict'}`;
    const beta = [...new Set([...optionStringList(connection.options, 'beta'), ...(request.anthropicBeta ?? [])])];
    if (beta.length > 0) headers['anthropic-beta'] = beta.join(',');
  } else {
    body = JSON.stringify(buildGenerateContentBody(request));
    url = `${prefix}:${generateContentMethod(request.stream)}`;
  }
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  return { url, method: 'POST', headers, body };
};
