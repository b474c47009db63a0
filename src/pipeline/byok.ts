import type { KeySnapshot, ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';

type ConnectionConfig = ResolvedTarget['connection'];

/**
 * BYOK at inference: for each target of the route (so per attempt: a fallback to another provider
 * takes that provider's key), the credential sent upstream is the caller's user-scoped BYOK key
 * for the target's provider, else the project-level BYOK key for it, else the connection's own
 * key. Only user tokens carry a user (an API key's owner is a label set by whoever created it, not
 * an authenticated caller), so API keys use the project key. Everything else of the connection
 * (base URL, options, address allowance) stays.
 *
 * The rewritten route is computed once per (route snapshot, user) and reused until the next
 * configuration revision.
 */

/** Bedrock: `ACCESS_KEY_ID:SECRET` signs with SigV4; anything else is a Bedrock API key (bearer). */
const BEDROCK_PAIR = /^([A-Z0-9]{16,128}):(\S+)$/;

const withSecret = (c: ConnectionConfig, secret: string): ConnectionConfig => {
  if (c.provider !== 'bedrock') return Object.freeze({ ...c, apiKey: secret });
  const m = BEDROCK_PAIR.exec(secret);
  const { accessKeyId: _dropped, ...options } = c.options;
  return Object.freeze(
    m ? { ...c, apiKey: m[2], options: { ...options, accessKeyId: m[1] as string } } : { ...c, apiKey: secret, options },
  );
};

const cache = new WeakMap<RouteSnapshot, Map<string, RouteSnapshot>>();

export const withByok = (route: RouteSnapshot, key: KeySnapshot): RouteSnapshot => {
  const { byok } = key.project;
  const mine = key.userId !== undefined ? byok.users.get(key.userId) : undefined;
  if (byok.project.size === 0 && !mine) return route;
  const who = mine ? (key.userId as string) : '';
  let perUser = cache.get(route);
  const hit = perUser?.get(who);
  if (hit) return hit;
  const secretFor = (provider: string): string | undefined => mine?.get(provider) ?? byok.project.get(provider);
  let changed = false;
  const tiers = route.tiers.map((tier) =>
    Object.freeze(
      tier.map((t): ResolvedTarget => {
        const secret = secretFor(t.connection.provider);
        if (secret === undefined) return t;
        changed = true;
        return Object.freeze({ ...t, connection: withSecret(t.connection, secret), byok: true });
      }),
    ),
  );
  const out = changed ? Object.freeze({ ...route, tiers: Object.freeze(tiers) }) : route;
  if (!perUser) {
    perUser = new Map();
    cache.set(route, perUser);
  }
  perUser.set(who, out);
  return out;
};
