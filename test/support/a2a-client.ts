import { Role } from '@a2a-js/sdk';
import { admin, type TestGateway } from './gateway.ts';

/** What the A2A tests share on the client side: an SDK message, a fetch that carries a key, a record looked up by request id. */

export const message = (text: string) => ({
  message: {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
  tenant: '',
});

/** A fetch that sends `Authorization: Bearer <key>` and hands each response's headers to `seen`. */
export const authedFetch = (key: string, seen: (h: Headers) => void): typeof fetch =>
  Object.assign(
    async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${key}`);
      const res = await fetch(input, { ...init, headers });
      seen(res.headers);
      return res;
    },
    { preconnect: fetch.preconnect },
  );

/** The request record of a request id (records are written after the answer: polled for up to 5 s). */
export const recordOf = async (tg: TestGateway, requestId: string): Promise<Record<string, unknown> | undefined> => {
  for (let i = 0; i < 50; i++) {
    const r = (await tg.must(admin('SearchRequestRecords'), { requestId })) as { records: Record<string, unknown>[] };
    if (r.records[0]) return r.records[0];
    await Bun.sleep(100);
  }
  return undefined;
};
