import { nodeHash } from './entry.ts';

/**
 * RFC 6962 §2.1 Merkle trees over leaf hashes (each already SHA-256(0x00 ‖ leaf)):
 * MTH({}) = SHA-256(), MTH({d}) = leaf hash, MTH(D[n]) = SHA-256(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n]))
 * with k the largest power of two smaller than n. Audit paths run from the leaf to the root.
 * The server builds its trees here; clients check a path with verifier.ts (WebCrypto).
 */

const EMPTY_ROOT = new Uint8Array(new Bun.CryptoHasher('sha256').digest());

/** The largest power of two strictly smaller than n (n ≥ 2). */
const split = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

const mth = (leaves: readonly Uint8Array[], lo: number, hi: number): Uint8Array => {
  const n = hi - lo;
  if (n === 1) return leaves[lo] as Uint8Array;
  const k = split(n);
  return nodeHash(mth(leaves, lo, lo + k), mth(leaves, lo + k, hi));
};

/** The Merkle tree hash of the leaves (their hashes, in order). */
export const merkleRoot = (leaves: readonly Uint8Array[]): Uint8Array => (leaves.length === 0 ? EMPTY_ROOT : mth(leaves, 0, leaves.length));

/** PATH(m, D[n]): the audit path of leaf `index`, leaf to root. */
export const auditPath = (leaves: readonly Uint8Array[], index: number): Uint8Array[] => {
  if (index < 0 || index >= leaves.length) throw new RangeError('leaf index out of range');
  const out: Uint8Array[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    const n = hi - lo;
    if (n <= 1) return;
    const k = split(n);
    if (m < k) {
      walk(m, lo, lo + k);
      out.push(mth(leaves, lo + k, hi));
    } else {
      walk(m - k, lo + k, hi);
      out.push(mth(leaves, lo, lo + k));
    }
  };
  walk(index, 0, leaves.length);
  return out;
};
