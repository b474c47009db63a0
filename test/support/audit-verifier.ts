import { createHash } from 'node:crypto';

/**
 * A second, minimal verifier written from the specifications, sharing no code with src/audit:
 * RFC 8785 (JCS) for the JSON values an audit entry holds, RFC 6962 §2.1 Merkle tree hashes and
 * audit paths, the RFC 9162 §2.1.3.2 path check, and Ed25519 (RFC 8032) through WebCrypto.
 */

/** RFC 8785 for strings, finite numbers, booleans, null, arrays and objects (keys sorted by UTF-16 code units). */
export const jcs = (v: unknown): string => {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error('not JSON');
    return JSON.stringify(v); // ECMAScript Number-to-String is what RFC 8785 §3.2.2.3 prescribes
  }
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(o[k])}`).join(',')}}`;
  }
  throw new Error('not JSON');
};

const sha256 = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

export const leafOf = (entry: unknown): Uint8Array => sha256(new Uint8Array([0]), new TextEncoder().encode(jcs(entry)));
const node = (l: Uint8Array, r: Uint8Array): Uint8Array => sha256(new Uint8Array([1]), l, r);

const k = (n: number): number => {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
};

/** MTH(D[n]) over leaf hashes, straight from RFC 6962 §2.1. */
export const mth = (d: Uint8Array[]): Uint8Array => {
  if (d.length === 0) return sha256();
  if (d.length === 1) return d[0] as Uint8Array;
  const s = k(d.length);
  return node(mth(d.slice(0, s)), mth(d.slice(s)));
};

/** PATH(m, D[n]) from RFC 6962 §2.1.1. */
export const path = (m: number, d: Uint8Array[]): Uint8Array[] => {
  if (d.length <= 1) return [];
  const s = k(d.length);
  return m < s ? [...path(m, d.slice(0, s)), mth(d.slice(s))] : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
};

/** RFC 9162 §2.1.3.2: does `proof` lead from `leaf` at `index` of `size` leaves to `root`? */
export const verifyInclusion = (leaf: Uint8Array, index: number, size: number, proof: Uint8Array[], root: Uint8Array): boolean => {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else r = node(r, p);
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 && Buffer.compare(Buffer.from(r), Buffer.from(root)) === 0;
};

export interface Cp {
  seq: string;
  rangeStartId: string;
  rangeEndId: string;
  rangeStartTs: string;
  rangeEndTs: string;
  leafCount: string;
  rootHash: string;
  prevRootHash: string;
  algo: string;
  signature: string;
  signingKid: string;
}

/** Ed25519 over JCS of the signed fields, with the JWK of `signingKid` (WebCrypto). */
export const signatureValid = async (cp: Cp, jwks: { keys: Record<string, unknown>[] }): Promise<boolean> => {
  const jwk = jwks.keys.find((x) => x.kid === cp.signingKid);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519') return false;
  const key = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string }, { name: 'Ed25519' }, false, [
    'verify',
  ]);
  const { seq, rangeStartId, rangeEndId, rangeStartTs, rangeEndTs, leafCount, rootHash, prevRootHash, algo } = cp;
  const msg = new TextEncoder().encode(
    jcs({ seq, rangeStartId, rangeEndId, rangeStartTs, rangeEndTs, leafCount, rootHash, prevRootHash, algo }),
  );
  return crypto.subtle.verify({ name: 'Ed25519' }, key, Buffer.from(cp.signature, 'base64'), msg);
};

export const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
export const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
