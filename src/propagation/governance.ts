import type { GuardrailAction, GuardrailKind, GuardrailRule, GuardrailStage } from '../governance/guardrail-scan.ts';
import type { BudgetPeriod } from '../governance/periods.ts';
import { PII_TYPES, type PiiType } from '../governance/pii.ts';
import {
  type CircuitBreakerSetting,
  DEFAULT_CIRCUIT_BREAKER,
  FULL_RETENTION,
  parseCircuitBreaker,
  parseGlobalFallback,
  parseMidStreamFallback,
  parseRateLimit,
  parseRecordRetention,
  parseResponseCache,
  parseTraceContent,
  type RateLimitSetting,
  type RecordRetentionSetting,
  type ResponseCacheSetting,
} from '../governance/setting-values.ts';
import { log } from '../core/log.ts';
import { compilePattern } from '../governance/pattern.ts';
import type { RE2JS } from 're2js';
import type { ConfigDocument } from '../api/config-document.ts';
import type { BudgetSnapshot } from './sections/budgets.snapshot.ts';
import type { ResolvedTarget } from './sections/connections.snapshot.ts';

/**
 * The governance part of a project's snapshot (contract §3.2): settings parsed, budgets and
 * guardrails compiled once per revision. A stored value that no longer parses is left out and
 * logged (the management plane validates on write, so this only guards against older rows).
 */

/** The settings part of a project's snapshot (sections/settings.snapshot.ts). */
export interface SettingsGovernance {
  /** The `rate-limit` setting, when set. */
  rateLimit: RateLimitSetting | undefined;
  /** The `trace-content` setting: prompt and completion text on spans (default false). */
  traceContent: boolean;
  /** The `record-retention` setting (default full bodies, kept forever). */
  retention: RecordRetentionSetting;
  /** The `response-cache` setting (contract §11), when set: answers are cached for the project (or key). */
  responseCache: ResponseCacheSetting | undefined;
  /** The `circuit-breaker` setting (contract §14; on by default); undefined when `failures` is 0 (off). */
  breaker: CircuitBreakerSetting | undefined;
  /** The `mid-stream-fallback` setting (contract §14, default false): a broken stream is continued by the route's next target. */
  midStreamFallback: boolean;
  /** The `global-fallback` setting's targets (those this data plane can serve), tried after a route's own. */
  fallback: readonly ResolvedTarget[];
}

const compile = (g: ConfigDocument['guardrails'][number]): GuardrailRule | undefined => {
  let regex: { regex: RE2JS; pattern: string; programSize: number } | undefined;
  if (g.kind === 'regex') {
    const pattern = g.pattern ?? '';
    const c = compilePattern(pattern);
    if (!c.ok) {
      // Saved before patterns were RE2 (lookaround, backreferences): the management API refuses them now.
      log.every(
        `guardrail-pattern-${g.id}`,
        'error',
        'a guardrail pattern cannot be matched in linear time; the guardrail is skipped until it is updated',
        {
          guardrail: g.name,
          reason: c.reason,
        },
      );
      return undefined;
    }
    regex = { regex: c.re, pattern, programSize: c.programSize };
  }
  return Object.freeze({
    name: g.name,
    stage: g.stage as GuardrailStage,
    kind: g.kind as GuardrailKind,
    ...regex,
    piiTypes: Object.freeze(g.piiTypes.filter((t): t is PiiType => (PII_TYPES as readonly string[]).includes(t))),
    ...(g.maxTokens !== null ? { maxTokens: g.maxTokens } : {}),
    action: g.action as GuardrailAction,
    ...(g.documents === 'refuse' ? { documents: 'refuse' as const } : {}),
  });
};

export const settingsGovernance = (
  settings: readonly ConfigDocument['settings'][number][],
  target: (connection: string, model: string) => ResolvedTarget | undefined,
): SettingsGovernance => {
  let rateLimit: RateLimitSetting | undefined;
  let traceContent = false;
  let retention = FULL_RETENTION;
  let responseCache: ResponseCacheSetting | undefined;
  let breaker: CircuitBreakerSetting | undefined = DEFAULT_CIRCUIT_BREAKER;
  let midStreamFallback = false;
  const fallback: ResolvedTarget[] = [];
  for (const s of settings) {
    if (s.name === 'rate-limit') {
      const p = parseRateLimit(s.value);
      if (p.ok) rateLimit = Object.freeze(p.value);
      else log.every('setting-unparsed', 'warn', 'a stored rate-limit setting does not parse; it is ignored', { reason: p.reason });
    } else if (s.name === 'trace-content') {
      const p = parseTraceContent(s.value);
      if (p.ok) traceContent = p.value;
      else log.every('setting-unparsed', 'warn', 'a stored trace-content setting does not parse; it is ignored', { reason: p.reason });
    } else if (s.name === 'record-retention') {
      const p = parseRecordRetention(s.value);
      if (p.ok) retention = Object.freeze(p.value);
      else log.every('setting-unparsed', 'warn', 'a stored record-retention setting does not parse; it is ignored', { reason: p.reason });
    } else if (s.name === 'response-cache') {
      const p = parseResponseCache(s.value);
      if (p.ok) responseCache = Object.freeze(p.value);
      else log.every('setting-unparsed', 'warn', 'a stored response-cache setting does not parse; it is ignored', { reason: p.reason });
    } else if (s.name === 'circuit-breaker') {
      const p = parseCircuitBreaker(s.value);
      if (p.ok) breaker = p.value.failures === 0 ? undefined : Object.freeze(p.value);
      else
        log.every('setting-unparsed', 'warn', 'a stored circuit-breaker setting does not parse; the default applies', { reason: p.reason });
    } else if (s.name === 'mid-stream-fallback') {
      const p = parseMidStreamFallback(s.value);
      if (p.ok) midStreamFallback = p.value;
      else
        log.every('setting-unparsed', 'warn', 'a stored mid-stream-fallback setting does not parse; it is ignored', { reason: p.reason });
    } else if (s.name === 'global-fallback') {
      const p = parseGlobalFallback(s.value);
      if (p.ok) {
        for (const t of p.value.targets) {
          const resolved = target(t.connection, t.model);
          if (resolved) fallback.push(resolved);
        }
      } else log.every('setting-unparsed', 'warn', 'a stored global-fallback setting does not parse; it is ignored', { reason: p.reason });
    }
  }
  return { rateLimit, traceContent, retention, responseCache, breaker, midStreamFallback, fallback: Object.freeze(fallback) };
};

export const budgetsGovernance = (budgets: readonly ConfigDocument['budgets'][number][]): readonly BudgetSnapshot[] =>
  Object.freeze(
    budgets.map((b) =>
      Object.freeze({ id: b.id, name: b.name, apiKeyId: b.apiKeyId, limitNanoUsd: b.limitNanoUsd, period: b.period as BudgetPeriod }),
    ),
  );

/** Guardrails by the stage they apply to (a `both` rule is in both lists), in the order given. */
export const guardrailsGovernance = (
  guardrails: readonly ConfigDocument['guardrails'][number][],
): { input: readonly GuardrailRule[]; output: readonly GuardrailRule[] } => {
  const rules = guardrails.map(compile).filter((r): r is GuardrailRule => r !== undefined);
  return Object.freeze({
    input: Object.freeze(rules.filter((r) => r.stage !== 'output')),
    output: Object.freeze(rules.filter((r) => r.stage !== 'input')),
  });
};
