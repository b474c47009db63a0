import { inwardAddress } from '../core/addresses.ts';
import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { A2aAgentConfig } from './config.ts';

/**
 * An A2A agent card (contract §12): fetched once by the management plane (CreateA2aAgent,
 * RefreshA2aAgent) and pinned by the SHA-256 of its bytes, validated for what the gateway needs of
 * it (a name and a JSON-RPC interface), and rewritten for the gateway's own card so that an SDK
 * client pointed at `/a2a/{agentId}` talks to the gateway. Both card generations are read: v1.0
 * (`supportedInterfaces[]` with `protocolBinding`) and v0.3 (`url` + `preferredTransport`,
 * `additionalInterfaces[]` with `transport`).
 */

/** A card larger than this is refused (contract §12 bad input). */
export const MAX_CARD_BYTES = 1024 * 1024;
/** How long fetching a card may take, all of it. */
export const CARD_TIMEOUT_MS = 10_000;

/** What the gateway keeps of a validated card. */
export interface PinnedCard {
  /** The card as fetched (what is pinned). */
  text: string;
  sha256: string;
  name: string;
  skills: { id: string; name: string }[];
  /** The agent's JSON-RPC endpoint, where calls go. */
  rpcUrl: string;
}

/** Why a card was refused: `invalid` (the URL answers no card) or `unreachable` (it could not be fetched). */
export class CardError extends Error {
  constructor(
    readonly reason: 'invalid' | 'unreachable' | 'inward',
    message: string,
  ) {
    super(message);
    this.name = 'CardError';
  }
}

const HTTP_URL = /^https?:\/\//i;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** The JSON-RPC URL a card names, or undefined when it names none. */
export const jsonRpcUrlOf = (card: Record<string, unknown>): string | undefined => {
  if (Array.isArray(card.supportedInterfaces)) {
    for (const i of card.supportedInterfaces)
      if (isRecord(i) && i.protocolBinding === 'JSONRPC' && str(i.url) && HTTP_URL.test(String(i.url))) return String(i.url);
    return undefined;
  }
  const url = str(card.url);
  const preferred = card.preferredTransport ?? 'JSONRPC';
  if (url && HTTP_URL.test(url) && preferred === 'JSONRPC') return url;
  if (Array.isArray(card.additionalInterfaces))
    for (const i of card.additionalInterfaces)
      if (isRecord(i) && i.transport === 'JSONRPC' && str(i.url) && HTTP_URL.test(String(i.url))) return String(i.url);
  return undefined;
};

const restUrls = new WeakMap<A2aAgentConfig, string | null>();

/**
 * The HTTP+JSON URL an agent's pinned card names (a v1.0 card's `supportedInterfaces[]` entry
 * with `protocolBinding: 'HTTP+JSON'`), or undefined: the gateway relays that binding only there.
 */
export const restUrlOf = (agent: A2aAgentConfig): string | undefined => {
  let url = restUrls.get(agent);
  if (url === undefined) {
    url = null;
    const card: unknown = JSON.parse(agent.card);
    if (isRecord(card) && Array.isArray(card.supportedInterfaces))
      for (const i of card.supportedInterfaces)
        if (isRecord(i) && i.protocolBinding === 'HTTP+JSON' && str(i.url) && HTTP_URL.test(String(i.url))) {
          url = String(i.url);
          break;
        }
    restUrls.set(agent, url);
  }
  return url ?? undefined;
};

const sha256Hex = (text: string): string => new Bun.CryptoHasher('sha256').update(text).digest('hex');

/** Validates a card's text; CardError('invalid') naming what is missing. */
export const parseCard = (text: string): PinnedCard => {
  let card: unknown;
  try {
    card = JSON.parse(text);
  } catch {
    throw new CardError('invalid', 'the answer is not JSON, so not an A2A agent card');
  }
  if (!isRecord(card)) throw new CardError('invalid', 'the answer is not a JSON object, so not an A2A agent card');
  const name = str(card.name);
  if (!name) throw new CardError('invalid', "the answer has no 'name', so it is not an A2A agent card");
  const rpcUrl = jsonRpcUrlOf(card);
  if (!rpcUrl) throw new CardError('invalid', 'the agent card names no JSON-RPC interface (an http or https URL) the gateway can call');
  const skills = Array.isArray(card.skills)
    ? card.skills.filter(isRecord).map((s) => ({ id: String(s.id ?? ''), name: String(s.name ?? s.id ?? '') }))
    : [];
  return { text, sha256: sha256Hex(text), name, skills, rpcUrl };
};

/** Refuses an inward address unless allowed (the upstream address rule, contract §3.1). */
export const checkAddress = async (url: string, allowPrivate: boolean, what: string): Promise<void> => {
  if (allowPrivate) return;
  const inward = await inwardAddress(url).catch(() => undefined);
  if (inward) throw new CardError('inward', `${what} points at a ${inward.class} address`);
};

/**
 * Fetches a card: the address rule first, no redirect followed (a 3xx is not a card), the whole
 * fetch within CARD_TIMEOUT_MS, the body read up to MAX_CARD_BYTES (past it the fetch is cut).
 * Returns the card's text as fetched.
 */
export const fetchCardText = async (url: string, allowPrivate: boolean, timeoutMs = CARD_TIMEOUT_MS): Promise<string> => {
  await checkAddress(url, allowPrivate, 'the card URL');
  let res: Response;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    res = await fetch(url, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
  } catch (e) {
    const timedOut = signal.aborted;
    throw new CardError(
      'unreachable',
      timedOut
        ? `the card URL did not answer within ${timeoutMs} ms`
        : `the card URL could not be fetched (${e instanceof Error ? e.message : 'network error'})`,
    );
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    throw new CardError('invalid', `the card URL answered a redirect (${res.status}); give the card's own URL`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new CardError('unreachable', `the card URL answered HTTP ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_CARD_BYTES) {
    await res.body.cancel().catch(() => undefined);
    throw new CardError('invalid', `the card is larger than ${MAX_CARD_BYTES} bytes (1 MiB)`);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > MAX_CARD_BYTES) {
        reader.cancel().catch(() => undefined);
        throw new CardError('invalid', `the card is larger than ${MAX_CARD_BYTES} bytes (1 MiB)`);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof CardError) throw e;
    throw new CardError(
      'unreachable',
      signal.aborted ? `the card URL did not answer within ${timeoutMs} ms` : 'the card could not be read',
    );
  }
  return Buffer.concat(chunks, total).toString('utf8');
};

/** Fetches and validates a card, and applies the address rule to the JSON-RPC URL it names. */
export const fetchCard = async (url: string, allowPrivate: boolean, timeoutMs = CARD_TIMEOUT_MS): Promise<PinnedCard> => {
  const card = parseCard(await fetchCardText(url, allowPrivate, timeoutMs));
  await checkAddress(card.rpcUrl, allowPrivate, "the card's JSON-RPC interface URL");
  return card;
};

/** The scheme the gateway's card names: its own bearer (an API key or a user token of the project). */
const BEARER_V1 = { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'an API key or user token of the project' } };
const BEARER_V03 = { type: 'http', scheme: 'bearer', description: 'an API key or user token of the project' };

/**
 * The gateway's card for an agent: the pinned card with every interface URL the gateway's
 * (`base`, its `/a2a/{agentId}`), only the interfaces the gateway serves (JSON-RPC, preferred, at
 * `base`; a v1.0 card's first HTTP+JSON one at `base/v1`), its security the gateway's bearer, and
 * no signatures (they sign the upstream's card, not this one).
 */
export const gatewayCard = (pinned: string, base: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(pinned);
  if (!isRecord(parsed)) throw new GatewayError({ kind: 'internal', message: 'The pinned agent card is not an object.' });
  const card: Record<string, unknown> = { ...parsed };
  delete card.signatures;
  if (Array.isArray(card.supportedInterfaces)) {
    const interfaces = card.supportedInterfaces.filter(isRecord);
    const rest = interfaces.find((i) => i.protocolBinding === 'HTTP+JSON' && str(i.url) && HTTP_URL.test(String(i.url)));
    card.supportedInterfaces = [
      ...interfaces.filter((i) => i.protocolBinding === 'JSONRPC').map((i) => ({ ...i, url: base })),
      ...(rest ? [{ ...rest, url: `${base}/v1` }] : []),
    ];
    card.securitySchemes = { gateway: BEARER_V1 };
    card.securityRequirements = [{ schemes: { gateway: { list: [] } } }];
    delete card.security;
  } else {
    card.url = base;
    card.preferredTransport = 'JSONRPC';
    if (Array.isArray(card.additionalInterfaces)) card.additionalInterfaces = [{ url: base, transport: 'JSONRPC' }];
    card.securitySchemes = { gateway: BEARER_V03 };
    card.security = [{ gateway: [] }];
  }
  return card;
};
