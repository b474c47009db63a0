import { type Evaluation, evaluate, evaluationCost } from './evaluate.ts';
import type { GuardrailAction, GuardrailKind, GuardrailRule, GuardrailStage } from './guardrail-scan.ts';
import type { PiiType } from './pii.ts';

/**
 * Where guardrail rules are evaluated, so that no guardrail holds the event loop beyond a bound
 * (one tenant's texts and patterns must never stall another tenant's requests):
 *
 * - evaluations whose worst-case cost (`evaluationCost`) fits INLINE_BUDGET — about 5 ms, which
 *   covers ordinary requests and every stream window — run inline, synchronously;
 * - larger ones run on one scan thread, one at a time in arrival order, each within `timeoutMs`: past
 *   it the thread is ended (and started again for the next one) and the evaluation fails with
 *   `ScanTimeout`, which the data plane turns into a refusal (fail closed).
 *
 * Matching is linear in the text (RE2, ./pattern.ts), so the bound holds for every pattern that saves.
 */

/** Cost units (≈20 ns each, worst case) an inline evaluation may take. */
export const INLINE_BUDGET = 256 * 1024;

/** A rule as it crosses to the scan thread (compiled patterns do not). */
export interface RuleSpec {
  name: string;
  stage: GuardrailStage;
  kind: GuardrailKind;
  pattern?: string;
  piiTypes: readonly PiiType[];
  action: GuardrailAction;
}

export interface ScanRequest {
  id: number;
  rules: RuleSpec[];
  texts: readonly string[];
}

export type ScanReply = { id: number; evaluation: Evaluation } | { id: number; error: string };

/** An evaluation that did not finish within the scan thread's time bound. */
export class ScanTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`guardrails could not be checked within ${timeoutMs} ms`);
  }
}

interface Job {
  id: number;
  request: ScanRequest;
  resolve(e: Evaluation): void;
  reject(e: Error): void;
}

const specOf = (r: GuardrailRule): RuleSpec => ({
  name: r.name,
  stage: r.stage,
  kind: r.kind,
  ...(r.pattern !== undefined ? { pattern: r.pattern } : {}),
  piiTypes: r.piiTypes,
  action: r.action,
});

class ScanThread {
  timeoutMs = 5000;
  /** Evaluations run on the thread (a figure for tests and /readyz-style introspection). */
  offloaded = 0;
  timeouts = 0;
  #worker: Worker | undefined;
  #queue: Job[] = [];
  #running: { job: Job; timer: ReturnType<typeof setTimeout> } | undefined;
  #ids = 0;

  run(rules: readonly GuardrailRule[], texts: readonly string[]): Promise<Evaluation> {
    this.offloaded++;
    return new Promise<Evaluation>((resolve, reject) => {
      const id = ++this.#ids;
      this.#queue.push({ id, request: { id, rules: rules.map(specOf), texts }, resolve, reject });
      this.#next();
    });
  }

  #spawn(): Worker {
    const w = new Worker(new URL('./scan-worker.ts', import.meta.url).href);
    (w as Worker & { unref?(): void }).unref?.();
    w.addEventListener('message', (ev: MessageEvent<ScanReply>) => this.#reply(w, ev.data));
    w.addEventListener('error', (ev: ErrorEvent) =>
      this.#lost(w, new Error(`the guardrail scan thread failed: ${ev.message || 'uncaught error'}`)),
    );
    this.#worker = w;
    return w;
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#queue.shift();
    if (!job) return;
    const w = this.#worker ?? this.#spawn();
    const timer = setTimeout(() => {
      this.timeouts++;
      this.#lost(w, new ScanTimeout(this.timeoutMs));
    }, this.timeoutMs);
    this.#running = { job, timer };
    w.postMessage(job.request);
  }

  #reply(w: Worker, reply: ScanReply): void {
    const running = this.#running;
    if (w !== this.#worker || !running || running.job.id !== reply.id) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    if ('evaluation' in reply) running.job.resolve(reply.evaluation);
    else running.job.reject(new Error(`guardrail evaluation failed: ${reply.error}`));
    this.#next();
  }

  /** The thread is ended (timed out or failed): the running job fails, the next one gets a new thread. */
  #lost(w: Worker, error: Error): void {
    if (w !== this.#worker) return;
    this.#worker = undefined;
    w.terminate();
    const running = this.#running;
    this.#running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.job.reject(error);
    }
    this.#next();
  }
}

/** The process's scan thread (started on first use). */
export const scanThread = new ScanThread();

/** Sets the time bound of an evaluation on the scan thread (GATEWAY_GUARDRAIL_SCAN_TIMEOUT). */
export const configureGuardrailScans = (opts: { timeoutMs: number }): void => {
  scanThread.timeoutMs = opts.timeoutMs;
};

/**
 * Evaluates rules on texts: inline when cheap enough (the result), else on the scan thread (a
 * promise, rejected with ScanTimeout past the bound).
 */
export const evaluateBounded = (rules: readonly GuardrailRule[], texts: readonly string[]): Evaluation | Promise<Evaluation> =>
  evaluationCost(rules, texts) <= INLINE_BUDGET ? evaluate(rules, texts) : scanThread.run(rules, texts);
