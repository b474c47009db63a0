import type { JsonObject } from '../canonical/types.ts';
import { asGatewayError } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import { responseObject } from '../formats/responses/response.ts';
import { sseEvent } from '../formats/sse.ts';
import { createSseParser } from '../providers/framing.ts';
import type { UpstreamFrame } from '../providers/types.ts';
import { type BackgroundJob, CANCELLED, SHUTDOWN } from './background-runs.ts';
import { type BackgroundRun, type Conversations, storeUnavailable, type StoredResponse } from './conversations.ts';
import type { InferenceServing } from './deps.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { idHeaders, jsonResponse, markGatewayStream } from '../pipeline/answer.ts';

/**
 * Responses `background: true` (issue 26 defect 4), for every upstream: the request is
 * authenticated, read, resolved and admitted as a foreground one (a refusal is the same 4xx), then
 * the gateway runs it itself and answers at once with the response `queued`. The client polls
 * `GET /v1/responses/{id}` (queued → in_progress → completed / incomplete / failed / cancelled),
 * cancels with `POST /v1/responses/{id}/cancel`, and with `stream: true` reads the events as they
 * come and resumes with `GET /v1/responses/{id}?stream=true&starting_after=N`.
 *
 * The response is kept in the stored-conversations store (so any data plane of the customer reads
 * it) with its run (core/conversation-store.ts `BackgroundRun`): the worker renews a lease while it
 * runs and writes a stream's events as they come (at most every second). A reader that finds the
 * response unfinished past its lease marks it failed: a worker that died is never waited for.
 * The run is settled and recorded as a foreground request is (budgets, limits, records).
 */

const TERMINAL = new Set(['completed', 'incomplete', 'failed', 'cancelled']);
export const isTerminal = (response: JsonObject): boolean => TERMINAL.has(String(response.status));

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** How often a running worker looks at its state (renewal, new events, a cancel from elsewhere). */
const tickMs = (leaseMs: number): number => Math.max(50, Math.min(1000, Math.floor(leaseMs / 3)));

export const workerLost = (): JsonObject => ({
  code: 'server_error',
  message:
    'The gateway worker running this background response stopped (its data plane restarted or was lost) before it finished; the response was not completed. Create it again.',
});

const shutDown = (): JsonObject => ({
  code: 'server_error',
  message:
    'The gateway data plane running this background response shut down before it finished; the response was not completed. Create it again.',
});

/** The error a failed run's answer or stream carried, as a Responses `error` object. */
const errorOf = (value: unknown): JsonObject => {
  const e = isObject(value) && isObject(value.error) ? value.error : isObject(value) ? value : {};
  const message = typeof e.message === 'string' ? e.message : 'The background response failed.';
  return { code: typeof e.code === 'string' ? e.code : 'server_error', message };
};

/**
 * SSE frames of a stream body (the one parser, providers/framing.ts), each event's JSON (comments
 * and `[DONE]` skipped). The body is the gateway's own stream, whose completed event carries the
 * whole answer: no event bound. An abort cancels the body, which cancels the upstream stream
 * (respond.ts sseResponse), as a client going away does.
 */
const readEvents = async (body: ReadableStream<Uint8Array>, signal: AbortSignal, each: (event: JsonObject) => void): Promise<void> => {
  const parser = createSseParser(Number.POSITIVE_INFINITY);
  const frames = (fs: readonly UpstreamFrame[]): void => {
    for (const { data } of fs) {
      if (data === '' || data === '[DONE]') continue;
      try {
        const parsed: unknown = JSON.parse(data);
        if (isObject(parsed)) each(parsed);
      } catch {
        // Not an event (the gateway writes JSON only).
      }
    }
  };
  const reader = body.getReader();
  const stop = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  for (;;) {
    const { done, value: chunk } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (done) break;
    frames(parser.push(chunk));
  }
  frames(parser.flush());
};

export const serveBackground = async (s: InferenceServing, run: (s: InferenceServing) => Promise<Response>): Promise<Response> => {
  const conv = s.deps.conversations;
  const keeper = s.state?.keeper;
  const hold = keeper?.hold;
  if (!conv || !keeper || !hold) throw storeUnavailable('background');
  const projectId = s.ctx.key?.project.id ?? '';
  const id = `resp_${s.ctx.ids.requestId.replace(/-/g, '')}`;
  const runs = conv.runs;
  const streamed = s.request.stream;
  const queued: JsonObject = {
    ...responseObject({
      id,
      createdAt: nowSeconds(),
      status: 'in_progress',
      model: s.request.model,
      output: [],
      usage: null,
      ...(keeper.responseFields ? { fields: keeper.responseFields } : {}),
    }),
    status: 'queued',
  };
  const lease = (events?: JsonObject[]): BackgroundRun => ({
    owner: runs.owner,
    leaseUntil: Date.now() + runs.leaseMs,
    ...(streamed ? { events: events ?? [] } : {}),
  });
  // Stored before answering: a poll that follows at once finds it (a store failure is the create's error).
  await hold(queued, lease());
  const job = runs.open(projectId, id);
  // The run's own stream is read here: the client's connection ends with the client's stream.
  const clientEnded = s.ctx.ids.streamEnded;
  s.ctx.ids.streamEnded = undefined;
  void work({ s, run, conv, job, projectId, id, queued, hold, keep: keeper.keep.bind(keeper), lease });
  if (!streamed) return jsonResponse(200, JSON.stringify(queued), s.ctx.ids);
  return tailResponse(localSource(job), -1, s.ctx.ids, clientEnded, s.deps.keepAliveMs);
};

interface Work {
  s: InferenceServing;
  run: (s: InferenceServing) => Promise<Response>;
  conv: Conversations;
  job: BackgroundJob;
  projectId: string;
  id: string;
  queued: JsonObject;
  hold: (response: JsonObject, run: BackgroundRun) => Promise<void>;
  keep: (answer: JsonObject, run?: BackgroundRun) => Promise<void>;
  lease: (events?: JsonObject[]) => BackgroundRun;
}

const cancelRequested = (stored: StoredResponse | undefined): boolean =>
  stored?.background?.cancelRequested === true || stored?.response.status === 'cancelled';

const storedResponse = async (conv: Conversations, projectId: string, id: string): Promise<StoredResponse | undefined> => {
  const found = await conv.get(projectId, id);
  return found?.kind === 'response' ? found : undefined;
};

const work = async (w: Work): Promise<void> => {
  const { s, conv, job, projectId, id } = w;
  const runs = conv.runs;
  let current: JsonObject = { ...w.queued, status: 'in_progress' };
  let answer: JsonObject | undefined;
  let failure: JsonObject | undefined;
  let written = 0;
  let lastWrite = Date.now();
  let writing: Promise<void> | undefined;
  const streamed = s.request.stream;
  const tick = (): void => {
    if (writing) return;
    const fresh = job.events.length !== written;
    if (!fresh && Date.now() - lastWrite < runs.leaseMs / 3) return;
    writing = (async () => {
      // A cancel through another data plane is seen here.
      if (cancelRequested(await storedResponse(conv, projectId, id))) {
        job.controller.abort(CANCELLED);
        return;
      }
      const n = job.events.length;
      await w.hold(current, w.lease(job.events.slice()));
      written = n;
      lastWrite = Date.now();
    })()
      .catch((e: unknown) =>
        log.every('background-heartbeat', 'warn', 'renewing a background response failed', { error: describeError(e) }),
      )
      .finally(() => {
        writing = undefined;
      });
  };
  const timer = setInterval(tick, tickMs(runs.leaseMs));
  try {
    await w.hold(current, w.lease());
    const inner: InferenceServing = {
      ...s,
      signal: job.controller.signal,
      state: {
        ...s.state,
        keeper: {
          ...(s.state?.keeper?.responseFields ? { responseFields: s.state.keeper.responseFields } : {}),
          keep: async (a) => {
            answer = a;
          },
        },
      },
    };
    const res = await w.run(inner);
    if (streamed && res.status === 200 && res.body) {
      await readEvents(res.body, job.controller.signal, (event) => {
        const e: JsonObject = { ...event, sequence_number: job.events.length };
        if (isObject(e.response) && (e.type === 'response.created' || e.type === 'response.in_progress'))
          current = { ...e.response, status: 'in_progress' };
        if (e.type === 'error' || e.type === 'response.failed') failure = errorOf(isObject(e.response) ? e.response : e);
        job.push(e);
      });
    } else {
      const text = await res.text();
      if (res.status === 200) answer ??= JSON.parse(text) as JsonObject;
      else failure = errorOf(JSON.parse(text));
    }
  } catch (e) {
    const err = asGatewayError(e);
    s.finish({ status: err.status, error: err });
    failure = { code: 'server_error', message: err.message };
  } finally {
    clearInterval(timer);
  }
  await writing;
  try {
    const done: BackgroundRun = { owner: runs.owner, leaseUntil: 0, ...(streamed ? { events: job.events } : {}) };
    const cancelled = job.controller.signal.reason === CANCELLED || cancelRequested(await storedResponse(conv, projectId, id));
    if (cancelled) await w.hold({ ...current, status: 'cancelled' }, done);
    else if (job.controller.signal.reason === SHUTDOWN) await w.hold({ ...current, status: 'failed', error: shutDown() }, done);
    else if (answer && !failure) await w.keep({ ...answer, background: true }, done);
    else
      await w.hold(
        {
          ...current,
          status: 'failed',
          error: failure ?? { code: 'server_error', message: 'The background response ended without an answer.' },
        },
        done,
      );
  } catch (e) {
    log.every(
      'background-final',
      'error',
      'storing the final state of a background response failed; readers will find it failed once its lease ends',
      { error: describeError(e) },
    );
  } finally {
    job.end();
    job.settled();
    runs.close(projectId, id, job);
  }
};

/** Where a stream's events come from: the run in this process, or the store (another data plane runs it, or it ended). */
export interface EventSource {
  /** Events after sequence number `after`, waiting up to `waitMs` for some; `done` once no more will come. */
  next(after: number, waitMs: number): Promise<{ events: JsonObject[]; done: boolean }>;
}

export const localSource = (job: BackgroundJob): EventSource => ({
  next: async (after, waitMs) => {
    if (job.events.length <= after + 1 && !job.finished) await Promise.race([job.changed(), Bun.sleep(waitMs)]);
    const events = job.events.slice(after + 1);
    return { events, done: job.finished };
  },
});

const POLL_MS = 250;

/** Polls the stored response; `read` applies the lease check. */
export const storeSource = (read: () => Promise<StoredResponse | undefined>): EventSource => ({
  next: async (after, waitMs) => {
    const until = Date.now() + waitMs;
    for (;;) {
      const stored = await read();
      if (!stored) return { events: [], done: true };
      const events = (stored.background?.events ?? []).slice(after + 1);
      const done = isTerminal(stored.response);
      if (events.length > 0 || done || Date.now() >= until) return { events, done };
      await Bun.sleep(POLL_MS);
    }
  },
});

const sseOf = (e: JsonObject): string => sseEvent(String(e.type), e);

/** The events after `startingAfter` as SSE, until the run ends; keep-alive comments while quiet. */
export const tailResponse = (
  source: EventSource,
  startingAfter: number,
  ids: RequestIds,
  ended: (() => void) | undefined,
  keepAliveMs: number,
): Response => {
  let after = startingAfter;
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { events, done } = await source.next(after, keepAliveMs);
        for (const e of events) if (typeof e.sequence_number === 'number') after = e.sequence_number;
        controller.enqueue(enc.encode(events.length > 0 ? events.map(sseOf).join('') : done ? '' : ': keep-alive\n\n'));
        if (done) {
          controller.close();
          ended?.();
        }
      } catch (e) {
        controller.error(e);
        ended?.();
      }
    },
    cancel() {
      ended?.();
    },
  });
  return markGatewayStream(
    new Response(stream, {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...idHeaders(ids) },
    }),
  );
};
