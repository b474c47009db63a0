import { concatBytes } from '../core/bytes.ts';
import { jcs } from '../core/jcs.ts';

/**
 * The one verifier of audit proofs (contract §3.3), written with WebCrypto (`crypto.subtle`) so
 * that the same code runs in Bun — `audit:verify` (verify.ts) — and in the browser — the console's
 * audit page (console/app/proof.ts, bundled for the browser: this module imports core helpers only):
 * - leaf hash = SHA-256(0x00 ‖ JCS(entry)), interior node = SHA-256(0x01 ‖ left ‖ right);
 * - an audit path (RFC 6962 §2.1.1, leaf to root) checked as RFC 9162 §2.1.3.2 prescribes;
 * - a checkpoint's Ed25519 signature over JCS of its signed fields, with the key its signingKid
 *   names in the JWKS document (`/.well-known/jwks.json`).
 * The server builds its trees with merkle.ts (synchronous hashing, thousands of leaves per window);
 * what a client checks is computed here.
 */

/** Bytes of a base64 string (standard alphabet); none for a string that is not base64, so a malformed value fails its check by name. */
export const fromBase64 = (b64: string): Uint8Array<ArrayBuffer> => {
  let bin = '';
  try {
    bin = atob(b64);
  } catch {
    return new Uint8Array(0);
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};

/** Base64 (standard alphabet) of bytes. */
export const toBase64 = (b: Uint8Array): string => {
  let bin = '';
  for (const v of b) bin += String.fromCharCode(v);
  return btoa(bin);
};

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

const sha256 = async (parts: readonly Uint8Array[]): Promise<Uint8Array> =>
  new Uint8Array(await crypto.subtle.digest('SHA-256', concatBytes(parts)));

/** SHA-256(0x00 ‖ JCS(entry)): the leaf of an audit entry as GetAuditLog returns it. */
export const leafHashOf = (entry: unknown): Promise<Uint8Array> => sha256([Uint8Array.of(0), new TextEncoder().encode(jcs(entry))]);

const nodeHash = (left: Uint8Array, right: Uint8Array): Promise<Uint8Array> => sha256([Uint8Array.of(1), left, right]);

/**
 * The root an audit path leads to (RFC 9162 §2.1.3.2), or undefined when the path does not fit a
 * tree of `treeSize` leaves (wrong length, index out of range).
 */
export const rootFromPath = async (
  leaf: Uint8Array,
  index: number,
  treeSize: number,
  path: readonly Uint8Array[],
): Promise<Uint8Array | undefined> => {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return undefined;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else r = await nodeHash(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
};

/** The signed fields of a checkpoint, as the wire spells them. */
export interface SignedFields {
  seq: string;
  rangeStartId: string;
  rangeEndId: string;
  rangeStartTs: string;
  rangeEndTs: string;
  leafCount: string;
  rootHash: string;
  prevRootHash: string;
  algo: string;
}

/** Contract §3.3: the bytes a checkpoint's signature covers — JCS of its signed fields. */
export const checkpointMessage = (c: SignedFields): Uint8Array<ArrayBuffer> =>
  new TextEncoder().encode(
    jcs({
      seq: c.seq,
      rangeStartId: c.rangeStartId,
      rangeEndId: c.rangeEndId,
      rangeStartTs: c.rangeStartTs,
      rangeEndTs: c.rangeEndTs,
      leafCount: c.leafCount,
      rootHash: c.rootHash,
      prevRootHash: c.prevRootHash,
      algo: c.algo,
    }),
  );

/**
 * The Ed25519 public keys of a JWKS document, by kid (their `x`, base64url): the first key of a kid
 * counts; other keys (the user-token RSA keys) are skipped.
 */
export const ed25519Jwks = (doc: unknown): Map<string, string> => {
  const keys = new Map<string, string>();
  const list = doc !== null && typeof doc === 'object' && 'keys' in doc && Array.isArray(doc.keys) ? doc.keys : [];
  for (const k of list) {
    if (k === null || typeof k !== 'object' || Array.isArray(k)) continue;
    if (!('kty' in k) || k.kty !== 'OKP' || !('crv' in k) || k.crv !== 'Ed25519') continue;
    if (!('kid' in k) || typeof k.kid !== 'string' || !('x' in k) || typeof k.x !== 'string' || keys.has(k.kid)) continue;
    keys.set(k.kid, k.x);
  }
  return keys;
};

/** The verification key of an Ed25519 JWK's `x`; rejects a malformed one (or a runtime without Ed25519). */
export const importEd25519 = (x: string): Promise<CryptoKey> =>
  crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x }, { name: 'Ed25519' }, false, ['verify']);

/** Whether `signature` (base64) is the Ed25519 signature of the checkpoint's signed fields under `key`. */
export const checkpointSignatureValid = (c: SignedFields & { signature: string }, key: CryptoKey): Promise<boolean> =>
  crypto.subtle.verify({ name: 'Ed25519' }, key, fromBase64(c.signature), checkpointMessage(c));
