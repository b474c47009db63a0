import type { ManagementClient } from '../../api/client.ts';
import { jcs } from '../../core/jcs.ts';

/**
 * An audit entry's inclusion proof verified in the browser (contract §3.3), with WebCrypto:
 * - leaf hash = SHA-256(0x00 ‖ JCS(entry as GetAuditLog returns it)), equal to the proof's;
 * - the audit path (RFC 6962 / RFC 9162 §2.1.3.2, interior node SHA-256(0x01 ‖ left ‖ right))
 *   leads from it to the sealed checkpoint's rootHash, in a tree of the checkpoint's leafCount;
 * - the checkpoint's Ed25519 signature over JCS of its signed fields verifies with the key named
 *   by signingKid in the admin listener's /.well-known/jwks.json.
 * Nothing is taken on the server's word: the server's answers are the inputs, the hashing is here.
 */

const bytes = (b64: string): Uint8Array<ArrayBuffer> => {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};
export const base64 = (b: Uint8Array): string => btoa(String.fromCharCode(...b));

const concat = (parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const sha256 = async (parts: Uint8Array[]): Promise<Uint8Array> => new Uint8Array(await crypto.subtle.digest('SHA-256', concat(parts)));

export const leafHashOf = (entry: unknown): Promise<Uint8Array> => sha256([Uint8Array.of(0), new TextEncoder().encode(jcs(entry))]);
const nodeHash = (left: Uint8Array, right: Uint8Array): Promise<Uint8Array> => sha256([Uint8Array.of(1), left, right]);

/** The root an audit path leads to (RFC 9162 §2.1.3.2), or undefined when it does not fit a tree of `treeSize` leaves. */
export const rootFromPath = async (leaf: Uint8Array, index: number, treeSize: number, path: readonly Uint8Array[]): Promise<Uint8Array | undefined> => {
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

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verdict {
  ok: boolean;
  /** Why there is nothing to verify (`unsealed`, `row_missing`), when so. */
  reason?: string;
  checks: Check[];
  checkpointSeq?: string;
}

/** The Ed25519 key `kid` from the JWKS document of this origin's admin listener. */
const publicKey = async (kid: string): Promise<CryptoKey | undefined> => {
  const res = await fetch('/.well-known/jwks.json');
  if (!res.ok) return undefined;
  const doc: unknown = await res.json();
  const keys = doc !== null && typeof doc === 'object' && 'keys' in doc && Array.isArray(doc.keys) ? doc.keys : [];
  for (const k of keys) {
    if (k === null || typeof k !== 'object' || !('kid' in k) || k.kid !== kid || !('x' in k) || typeof k.x !== 'string') continue;
    if (!('crv' in k) || k.crv !== 'Ed25519') continue;
    return crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: k.x }, { name: 'Ed25519' }, false, ['verify']);
  }
  return undefined;
};

export const verifyEntry = async (client: ManagementClient, id: string): Promise<Verdict> => {
  const proof = await client.call('GetAuditInclusionProof', { auditLogId: id });
  if (!proof.found || !proof.checkpoint) return { ok: false, reason: proof.reason || 'not found', checks: [] };
  const cp = proof.checkpoint;
  const checks: Check[] = [];
  const entry = await client.callJson('GetAuditLog', { id });
  const leaf = await leafHashOf(entry.log);
  checks.push({ name: 'leaf hash', ok: same(leaf, bytes(proof.leafHash)), detail: `SHA-256(0x00 ‖ JCS(entry)) = ${base64(leaf)}` });
  const root = await rootFromPath(leaf, Number(proof.leafIndex), Number(proof.treeSize), proof.proof.map(bytes));
  checks.push({
    name: 'audit path',
    ok: root !== undefined && same(root, bytes(cp.rootHash)),
    detail: `leaf ${proof.leafIndex} of ${proof.treeSize}, ${proof.proof.length} nodes → ${root ? base64(root) : 'does not fit the tree'}; checkpoint root ${cp.rootHash}`,
  });
  checks.push({ name: 'window unchanged', ok: proof.treeSize === cp.leafCount, detail: `${proof.treeSize} entries now, ${cp.leafCount} when sealed` });
  const signed = jcs({
    seq: cp.seq,
    rangeStartId: cp.rangeStartId,
    rangeEndId: cp.rangeEndId,
    rangeStartTs: cp.rangeStartTs,
    rangeEndTs: cp.rangeEndTs,
    leafCount: cp.leafCount,
    rootHash: cp.rootHash,
    prevRootHash: cp.prevRootHash,
    algo: cp.algo,
  });
  let signatureOk = false;
  let detail = `Ed25519, key ${cp.signingKid}`;
  try {
    const key = await publicKey(cp.signingKid);
    if (!key) detail += ': not published';
    else signatureOk = await crypto.subtle.verify({ name: 'Ed25519' }, key, bytes(cp.signature), new TextEncoder().encode(signed));
  } catch (e) {
    // No such key type in this browser, or a malformed key or signature: the check fails, named.
    detail += `: ${e instanceof Error ? e.message : String(e)}`;
  }
  checks.push({ name: 'checkpoint signature', ok: signatureOk, detail });
  return { ok: checks.every((c) => c.ok), checks, checkpointSeq: cp.seq };
};
