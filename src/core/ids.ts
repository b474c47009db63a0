import { randomBytes, randomUUID } from 'node:crypto';

export const uuid = (): string => randomUUID();

/** A project's key in the snapshot's project map: `customer/project` (slugs). */
export const projectKey = (customerId: string, projectId: string): string => `${customerId}/${projectId}`;

/**
 * A request id: a time-ordered UUID (version 7). Request records are keyed by it, so their primary
 * key index grows at its right edge instead of touching a random page per insert, and ids sort
 * roughly by arrival.
 */
export const requestUuid = (): string => Bun.randomUUIDv7();

const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `n` random URL-safe characters (6 bits of entropy each). */
export const randomToken = (n: number): string => {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += URL_SAFE[(bytes[i] ?? 0) & 63];
  return out;
};

/** An inference API key: `sk-` + 48 URL-safe characters (288 bits). */
export const newApiKey = (): string => `sk-${randomToken(48)}`;

export const sha256Hex = (text: string): string => new Bun.CryptoHasher('sha256').update(text).digest('hex');
