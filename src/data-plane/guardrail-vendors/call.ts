import { readBounded } from '../../core/bounded-read.ts';
import { GatewayError } from '../../core/errors.ts';
import { describeError, log } from '../../core/log.ts';
import { failModeOf, type ProviderGuardrail } from '../../governance/guardrail-providers.ts';
import type { GuardrailDecision, RequestContext } from '../../pipeline/context.ts';
import type { UpstreamHttpRequest } from '../../providers/types.ts';
import { checkAddress } from '../upstream.ts';
import { buildRequests, type CallMeta, readVerdict, type Stage, type Verdict, VendorFault } from './kinds.ts';

/**
 * One provider guardrail's check of a set of texts: the vendor's address checked (contract §3.1),
 * its request(s) sent with the guardrail's `timeoutMs`, its answer read (bounded) and turned into a
 * verdict. A vendor that gives none — unreachable, slow, refusing (401, 429, 5xx…), answering garbage
 * — is a fault: the guardrail's fail mode decides (`closed` refuses, `open` lets through), the log
 * names the guardrail and why (never its credential), and the decision goes on the record.
 */

/** The largest vendor answer read. */
const MAX_ANSWER_BYTES = 4 << 20;

/** The outcome of one check as the policies apply it: the verdict (a fault already resolved by the fail mode). */
export type Checked = Verdict | { action: 'fail_open'; reason: string };

const tooLarge = (): GatewayError =>
  new GatewayError({ kind: 'upstream_error', status: 502, message: 'guardrail answer too large', retryable: false });

const send = async (g: ProviderGuardrail, req: UpstreamHttpRequest, signal: AbortSignal): Promise<unknown> => {
  const address = checkAddress(req.url, { id: '', name: g.name, provider: g.kind, options: {}, allowPrivate: g.allowPrivate });
  if (address)
    await address.catch((e: unknown) =>
      Promise.reject(
        new VendorFault(
          e instanceof GatewayError && e.errorCode === 'upstream_address_forbidden'
            ? 'its address is inward (not allowed for this guardrail)'
            : 'unreachable',
        ),
      ),
    );
  let res: Response;
  try {
    res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal, redirect: 'manual' });
  } catch {
    throw new VendorFault(signal.aborted ? `no answer within ${g.timeoutMs} ms` : 'unreachable');
  }
  let text: string;
  try {
    text = res.body ? await readBounded(res.body, MAX_ANSWER_BYTES, tooLarge) : '';
  } catch (e) {
    throw new VendorFault(
      signal.aborted
        ? `no answer within ${g.timeoutMs} ms`
        : e instanceof GatewayError
          ? 'its answer is too large'
          : 'the answer broke off',
    );
  }
  if (res.status === 429) throw new VendorFault('rate limited (429)');
  if (res.status < 200 || res.status > 299) throw new VendorFault(`it answered HTTP ${res.status}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new VendorFault('the answer is not JSON');
  }
};

const metaOf = (ctx: RequestContext): CallMeta => ({
  requestId: ctx.ids.requestId,
  customerId: ctx.key?.customerId ?? null,
  projectId: ctx.key?.projectId ?? null,
  model: ctx.model ?? null,
});

/** Decisions by weight: a stream's windows make one decision per guardrail and stage, the weightiest, their latencies added. */
const WEIGHT: Record<string, number> = { allow: 0, fail_open: 1, flag: 2, redact: 3, fail_closed: 4, block: 5 };

const decide = (ctx: RequestContext, g: ProviderGuardrail, stage: Stage, action: string, t0: number): void => {
  const latencyMs = Math.round(performance.now() - t0);
  ctx.guardrails ??= [];
  const same = ctx.guardrails.find((d) => d.name === g.name && d.stage === stage);
  if (!same) {
    const d: GuardrailDecision = { name: g.name, stage, action, provider: g.kind, latencyMs };
    ctx.guardrails.push(d);
    return;
  }
  same.latencyMs += latencyMs;
  if ((WEIGHT[action] ?? 0) > (WEIGHT[same.action] ?? 0)) same.action = action;
};

export const blockedBy = (name: string, what: 'request' | 'response', unchecked = false): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    errorCode: 'guardrail_blocked',
    message: unchecked
      ? `The ${what} was blocked: the guardrail '${name}' could not be checked.`
      : `The ${what} was blocked by the guardrail '${name}'.`,
    retryable: false,
  });

/**
 * Checks the texts with one guardrail. Throws the refusal (a block under action `block`, or a fault
 * under fail mode `closed`); a flag is recorded; returns the verdict to apply otherwise.
 */
export const checkWith = async (ctx: RequestContext, g: ProviderGuardrail, texts: readonly string[], stage: Stage): Promise<Checked> => {
  const what = stage === 'input' ? 'request' : 'response';
  const t0 = performance.now();
  let verdict: Verdict;
  try {
    const signal = AbortSignal.timeout(g.timeoutMs);
    const requests = buildRequests(g, texts, stage, metaOf(ctx), new Date());
    const answers = await Promise.all(requests.map((r) => send(g, r, signal)));
    verdict = readVerdict(g, texts, answers);
  } catch (e) {
    const reason = e instanceof VendorFault ? e.message : describeError(e);
    const mode = failModeOf(g.failMode, stage);
    log.every(
      `guardrail-fault-${g.name}-${reason}`,
      'warn',
      `a guardrail provider gave no verdict; fail mode ${mode}`,
      {
        guardrail: g.name,
        kind: g.kind,
        stage,
        reason,
        requestId: ctx.ids.requestId,
      },
      10_000,
    );
    decide(ctx, g, stage, mode === 'closed' ? 'fail_closed' : 'fail_open', t0);
    if (mode === 'closed') throw blockedBy(g.name, what, true);
    return { action: 'fail_open', reason };
  }
  if (verdict.action !== 'allow' && g.action === 'flag') {
    ctx.flags ??= new Set();
    ctx.flags.add(g.name);
    decide(ctx, g, stage, 'flag', t0);
    return { action: 'allow' };
  }
  decide(ctx, g, stage, verdict.action, t0);
  if (verdict.action === 'block') throw blockedBy(g.name, what);
  return verdict;
};

/**
 * Checks the texts with every guardrail (their calls in parallel) and returns the texts to use:
 * the first refusal in the guardrails' order is thrown; redactions apply in order — a later
 * redaction is checked again on the texts an earlier one rewrote.
 */
export const checkAll = async (
  ctx: RequestContext,
  guardrails: readonly ProviderGuardrail[],
  texts: readonly string[],
  stage: Stage,
): Promise<readonly string[]> => {
  if (texts.length === 0 || texts.every((t) => t === '')) return texts;
  const settled = await Promise.allSettled(guardrails.map((g) => checkWith(ctx, g, texts, stage)));
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  let current = texts;
  for (let i = 0; i < settled.length; i++) {
    const s = settled[i];
    if (s?.status !== 'fulfilled' || s.value.action !== 'redact') continue;
    const v = current === texts ? s.value : await checkWith(ctx, guardrails[i] as ProviderGuardrail, current, stage);
    if (v.action === 'redact') current = v.texts;
  }
  return current;
};
