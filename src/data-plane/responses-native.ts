import type { CanonicalRequest, JsonObject, JsonValue } from '../canonical/types.ts';
import type { CatalogEntry } from '../propagation/snapshot.ts';
import type { Keeper } from './stateful.ts';

/**
 * Responses requests sent natively to upstreams that speak the Responses API (openai,
 * azure-openai), and what the data plane changes on the way. Decisions (docs/clients.md):
 *
 * - Conversation state stays in the gateway. `previous_response_id` and `item_reference` are
 *   expanded from the gateway's store before dispatch (stateful.ts), and the upstream always gets
 *   `store: false`: the same request means the same thing whichever upstream serves it (a
 *   conversation can move between connections, accounts and provider families, and fall back to a
 *   translated upstream), and `store: false` from the client keeps nothing anywhere.
 * - With `store: false` upstream, reasoning items can only be replayed with their encrypted
 *   content. When the gateway keeps the answer and the model's catalog entry has the `reasoning`
 *   capability, `include` gets `"reasoning.encrypted_content"` (non-reasoning models refuse it), so
 *   the kept reasoning items carry it and a later turn can send them back.
 * - The answer keeps the gateway's id scheme (`resp_<request id hex>`, as on the translated path)
 *   and the client's `model`, `store` and `previous_response_id`; everything else is the upstream's
 *   (item ids, reasoning items, built-in tool calls, usage).
 */

export const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/** The body sent upstream: the client's (references expanded), `store: false`, encrypted reasoning when kept. */
export const nativeResponsesBody = (body: JsonObject, keeper: Keeper | undefined, catalog: CatalogEntry): JsonObject => {
  const out: JsonObject = { ...body, store: false };
  const kept = keeper?.responseFields?.store === true;
  if (kept && catalog.capabilities.includes('reasoning')) {
    const include = Array.isArray(body.include) ? body.include : [];
    if (!include.includes(ENCRYPTED_REASONING)) out.include = [...include, ENCRYPTED_REASONING];
  }
  return out;
};

/** How the upstream's Responses answer becomes the client's. */
export interface NativeAnswer {
  /** A JSON answer (the `response` object). */
  json(text: string): string;
  /** A new splicer for one stream's text (it learns the upstream's response id from the first event). */
  splicer(): (text: string) => string;
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

export const nativeAnswer = (request: CanonicalRequest, responseId: string, fields: JsonObject | undefined): NativeAnswer => {
  const set = (o: JsonObject): JsonObject => {
    const out: JsonObject = { ...o, id: responseId, model: request.model };
    if (fields) for (const [k, v] of Object.entries(fields)) out[k] = v as JsonValue;
    return out;
  };
  // Members of the response object as the upstream writes them in stream events (compact JSON).
  const swaps: [string, string][] = [];
  if (fields) {
    for (const [k, v] of Object.entries(fields)) {
      if (k === 'store') swaps.push([`"store":${JSON.stringify(!v)}`, `"store":${JSON.stringify(v)}`]);
      if (k === 'previous_response_id' && v !== null)
        swaps.push(['"previous_response_id":null', `"previous_response_id":${JSON.stringify(v)}`]);
      if (k === 'background' && v === true) swaps.push(['"background":false', '"background":true']);
      if (k === 'conversation' && v !== null) swaps.push(['"conversation":null', `"conversation":${JSON.stringify(v)}`]);
    }
  }
  const quotedId = JSON.stringify(responseId);
  const clientModel = JSON.stringify(request.model);
  return {
    json: (text) => {
      const parsed: unknown = JSON.parse(text);
      return isObject(parsed) ? JSON.stringify(set(parsed)) : text;
    },
    splicer: () => {
      let upstreamId: string | undefined;
      // The model the upstream reports (OpenAI names a dated snapshot, e.g. `o4-mini-2025-04-16`).
      let upstreamModel: string | undefined;
      return (text) => {
        if (upstreamId === undefined && text.includes('"response":{')) {
          const m = /"response":\{"id":("resp_[^"\\]*")/.exec(text) ?? /"id":("resp_[^"\\]*")/.exec(text);
          if (m) upstreamId = m[1];
          // The first event is response.created: its first `model` member is the response's.
          const model = /"model":("[^"\\]*")/.exec(text);
          if (model && model[1] !== clientModel) upstreamModel = `"model":${model[1]}`;
        }
        let out = upstreamId !== undefined && text.includes(upstreamId) ? text.replaceAll(upstreamId, quotedId) : text;
        if (upstreamModel !== undefined && out.includes(upstreamModel)) out = out.replaceAll(upstreamModel, `"model":${clientModel}`);
        for (const [from, to] of swaps) if (out.includes(from)) out = out.replaceAll(from, to);
        return out;
      };
    },
  };
};
