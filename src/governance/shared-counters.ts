import { type Counters, MemoryCounters } from './counters.ts';
import { LeasedCounters } from './leased-counters.ts';
import { RedisCounters } from './redis-counters.ts';

/**
 * The counters of rate limits and budgets for a process that admits requests (the embedded data
 * plane, or a separate one): Redis when `REDIS_URL` is set — shared by every data plane and the
 * management plane that reads `spentUsd` — with leases unless GATEWAY_LIMITS_LEASES=0; else this
 * process's own.
 */
export const sharedCounters = (o: { redisUrl: string | undefined; leases: boolean }): Counters => {
  if (!o.redisUrl) return new MemoryCounters();
  const shared = new RedisCounters(o.redisUrl);
  return o.leases ? new LeasedCounters(shared) : shared;
};
