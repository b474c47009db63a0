import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * MCP sessions without stickiness. The `Mcp-Session-Id` the gateway hands out carries everything
 * the gateway needs to serve the session (the profile row, the caller, what the client declared at
 * `initialize`) and is signed with an HMAC keyed by the caller's own credential: any replica that
 * can authenticate the caller can check it, and nobody without the credential can make one that
 * checks. Nothing about a session is only in one process's memory; upstream sessions are opened
 * lazily on whichever replica serves a request (mcp/upstream.ts) and re-opened when they expire.
 */

export interface SessionState {
  /** The profile's row id (a profile deleted and re-created is another session). */
  profile: string;
  /** The caller's key id (an API key's id, or `user-token:<jti>`). */
  caller: string;
  /** The protocol version negotiated at initialize. */
  protocolVersion: string;
  /** The client's capabilities and info as it declared them at initialize. */
  capabilities: Record<string, unknown>;
  clientInfo: { name: string; version: string };
  /** Epoch seconds the session was opened. */
  issued: number;
  /** Makes every session's id unique. */
  nonce: string;
}

const LABEL = 'gateway mcp session v1';
const keys = new Map<string, Buffer>();
const keyFor = (credential: string): Buffer => {
  let k = keys.get(credential);
  if (!k) {
    k = createHmac('sha256', LABEL).update(credential).digest();
    if (keys.size >= 4096) keys.clear();
    keys.set(credential, k);
  }
  return k;
};

const mac = (credential: string, payload: string): string => createHmac('sha256', keyFor(credential)).update(payload).digest('base64url');

export const newNonce = (): string => randomBytes(12).toString('base64url');

/** The session id: base64url(JSON state) `.` HMAC — visible ASCII only, as the transport requires. */
export const sessionIdOf = (credential: string, state: SessionState): string => {
  const payload = Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
  return `${payload}.${mac(credential, payload)}`;
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The state of a session id signed for this credential, or undefined (forged, another caller's, malformed). */
export const openSessionId = (credential: string, id: string): SessionState | undefined => {
  const dot = id.indexOf('.');
  if (dot <= 0 || id.length > 8192) return undefined;
  const payload = id.slice(0, dot);
  const given = Buffer.from(id.slice(dot + 1), 'base64url');
  const want = Buffer.from(mac(credential, payload), 'base64url');
  if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(v)) return undefined;
  const { profile, caller, protocolVersion, capabilities, clientInfo, issued, nonce } = v;
  if (
    typeof profile !== 'string' ||
    typeof caller !== 'string' ||
    typeof protocolVersion !== 'string' ||
    typeof issued !== 'number' ||
    typeof nonce !== 'string'
  )
    return undefined;
  if (!isRecord(capabilities) || !isRecord(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string')
    return undefined;
  return {
    profile,
    caller,
    protocolVersion,
    capabilities,
    clientInfo: { name: clientInfo.name, version: clientInfo.version },
    issued,
    nonce,
  };
};
