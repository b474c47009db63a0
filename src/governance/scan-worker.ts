/// <reference lib="webworker" />
import { type Evaluation, evaluate } from './evaluate.ts';
import type { GuardrailRule } from './guardrail-scan.ts';
import { compilePattern } from './pattern.ts';
import type { RuleSpec, ScanReply, ScanRequest } from './scan-pool.ts';

/**
 * The guardrail scan thread (./scan-pool.ts): evaluates rules on texts too large to scan on the
 * event loop within its bound. Patterns are compiled again here (compiled automata do not cross
 * threads), cached by source.
 */

const compiled = new Map<string, GuardrailRule>();
const MAX_CACHED = 512;

const ruleOf = (spec: RuleSpec): GuardrailRule => {
  const key = JSON.stringify(spec);
  const hit = compiled.get(key);
  if (hit) return hit;
  const c = spec.kind === 'regex' && spec.pattern !== undefined ? compilePattern(spec.pattern) : undefined;
  const rule: GuardrailRule = {
    name: spec.name,
    stage: spec.stage,
    kind: spec.kind,
    piiTypes: spec.piiTypes,
    action: spec.action,
    ...(c?.ok ? { regex: c.re, pattern: spec.pattern, programSize: c.programSize } : {}),
  };
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(key, rule);
  return rule;
};

declare const self: Worker;

self.onmessage = (ev: MessageEvent<ScanRequest>) => {
  const { id, rules, texts } = ev.data;
  let reply: ScanReply;
  try {
    const evaluation: Evaluation = evaluate(rules.map(ruleOf), texts);
    reply = { id, evaluation };
  } catch (e) {
    reply = { id, error: e instanceof Error ? e.message : String(e) };
  }
  self.postMessage(reply);
};
