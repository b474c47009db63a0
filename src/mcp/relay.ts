import { randomBytes } from 'node:crypto';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { bareMcpMessage } from './error-text.ts';

/**
 * Answers to the gateway's own requests to the client. A request the gateway sends the client
 * (a server's sampling, elicitation or roots request passed through) is answered by the client in
 * a later POST, which another per-request `Server` receives. Each such request leaves with an id
 * unique to this process (every per-request Server numbers from 0), and the answer is handed back
 * to the Server that asked, under the id it used. Answers that reach another replica are not
 * delivered (the request waiting for them is in this process's memory): the server's request then
 * times out upstream.
 */

type Reply = JSONRPCResultResponse | JSONRPCErrorResponse;

const PREFIX = `gw-${randomBytes(6).toString('base64url')}-`;
let counter = 0;
const pending = new Map<string, (reply: Reply) => void>();

export const isReply = (m: unknown): m is Reply => isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m);

/** Delivers a client's answer to the Server that asked; false when it is not waited for here. */
export const deliverReply = (reply: Reply): boolean => {
  const id = reply.id;
  const to = typeof id === 'string' ? pending.get(id) : undefined;
  if (!to || typeof id !== 'string') return false;
  pending.delete(id);
  to(reply);
  return true;
};

export const pendingReplies = (): number => pending.size;

/** The SDK's web-standard transport with the gateway's request ids (see above), and error texts without the SDK's prefix (error-text.ts). */
export class RelayTransport implements Transport {
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly mine = new Set<string>();

  constructor(readonly inner: WebStandardStreamableHTTPServerTransport) {}

  start(): Promise<void> {
    this.inner.onmessage = (m, extra) => this.onmessage?.(m, extra);
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => {
      for (const id of this.mine) pending.delete(id);
      this.mine.clear();
      this.onclose?.();
    };
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCErrorResponse(message))
      return this.inner.send({ ...message, error: { ...message.error, message: bareMcpMessage(message.error.message) } }, options);
    if (!isJSONRPCRequest(message)) return this.inner.send(message, options);
    const own = message.id;
    const id = `${PREFIX}${++counter}`;
    this.mine.add(id);
    pending.set(id, (reply) => {
      this.mine.delete(id);
      this.onmessage?.({ ...reply, id: own });
    });
    return this.inner.send({ ...message, id }, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
