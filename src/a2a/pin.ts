import { upstreamBounds } from '../core/upstream-bounds.ts';
import { fetchCardText } from './card.ts';
import type { A2aAgentConfig } from './config.ts';

/**
 * The pin, checked where the agent is served (contract §12): the data plane fetches the agent's
 * card again at most every GATEWAY_A2A_CARD_CHECK (`upstreamBounds.a2aCardCheckMs`) and serves the agent only while it hashes to the
 * pinned `cardSha256`. The first call of an agent (per pin) waits for the check; later ones use the
 * last verdict while a stale one is renewed in the background. A card that cannot be fetched does
 * not count as drift (the call itself reports an agent that is down).
 */

/** How long an agent's stream may stay quiet between events. */
export const A2A_STREAM_IDLE_MS = 300_000;

interface Verdict {
  at: number;
  drifted: boolean;
  renewing?: Promise<boolean>;
}

const verdicts = new Map<string, Verdict>();

const check = async (a: A2aAgentConfig): Promise<boolean> => {
  try {
    const text = await fetchCardText(a.cardUrl, a.allowPrivate, 5_000);
    return new Bun.CryptoHasher('sha256').update(text).digest('hex') !== a.cardSha256;
  } catch {
    return false;
  }
};

const renew = (key: string, a: A2aAgentConfig, v: Verdict | undefined): Promise<boolean> => {
  if (v?.renewing) return v.renewing;
  const renewing = check(a).then((drifted) => {
    verdicts.set(key, { at: Date.now(), drifted });
    if (verdicts.size > 10_000) verdicts.delete(verdicts.keys().next().value ?? '');
    return drifted;
  });
  verdicts.set(key, { at: v?.at ?? 0, drifted: v?.drifted ?? false, renewing });
  return renewing;
};

/** Whether the agent's upstream card no longer matches its pin. */
export const isDrifted = (a: A2aAgentConfig, now = Date.now()): boolean | Promise<boolean> => {
  const key = `${a.agentId}\n${a.cardSha256}`;
  const v = verdicts.get(key);
  if (!v || (v.at === 0 && v.renewing)) return renew(key, a, v);
  if (now - v.at > upstreamBounds.a2aCardCheckMs) void renew(key, a, v);
  return v.drifted;
};
