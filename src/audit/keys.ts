import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import { randomToken } from '../core/ids.ts';
import type { SecretBox } from '../core/secrets.ts';
import type { Db } from '../store/db.ts';
import { auditCheckpoints, signingKeys } from '../store/schema/index.ts';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * The audit signing keys: Ed25519, in `signing_keys` with purpose 'audit' (the private key as
 * PKCS#8 PEM wrapped with the KEK). One is active; rotation retires it and creates another. A
 * retired key stays published in the JWKS while a checkpoint signed with it exists.
 */

export const AUDIT_PURPOSE = 'audit';
export const USER_TOKEN_PURPOSE = 'user_token';
/** Checkpoints' `kekVersion`: always 1, a field of the format (the KEK wrapping a signing key is named in its envelope; docs/audit.md). */
export const KEK_VERSION = 1;

export interface AuditSigner {
  kid: string;
  sign(message: Uint8Array): Uint8Array;
}

export interface Jwk {
  kty: string;
  kid: string;
  alg: string;
  use: 'sig';
  crv?: string;
  x?: string;
  n?: string;
  e?: string;
}

type Reader = Pick<Db, 'select' | 'selectDistinct'>;

const newKeyRow = (secrets: SecretBox) => {
  const pair = generateKeyPairSync('ed25519');
  return {
    kid: `ak_${randomToken(16)}`,
    purpose: AUDIT_PURPOSE,
    alg: 'EdDSA',
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyWrapped: secrets.wrap(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
  };
};

const activeRow = async (db: Pick<Db, 'select'>) =>
  (
    await db
      .select()
      .from(signingKeys)
      .where(and(eq(signingKeys.purpose, AUDIT_PURPOSE), isNull(signingKeys.retiredAt)))
      .limit(1)
  )[0];

/** Private keys already unwrapped, by kid (a kid's key never changes). */
const privateKeys = new Map<string, KeyObject>();

const signerOf = (row: { kid: string; privateKeyWrapped: string }, secrets: SecretBox): AuditSigner => {
  let key = privateKeys.get(row.kid);
  if (!key) {
    key = createPrivateKey(secrets.unwrap(row.privateKeyWrapped));
    privateKeys.set(row.kid, key);
  }
  const k = key;
  return { kid: row.kid, sign: (message) => new Uint8Array(sign(null, message, k)) };
};

/**
 * The active audit signer, created on first use. Safe with several replicas: the active key is
 * unique per purpose (partial unique index), so a racing creator's insert is a no-op.
 */
export const activeAuditSigner = async (db: Pick<Db, 'select' | 'insert'>, secrets: SecretBox): Promise<AuditSigner> => {
  let row = await activeRow(db);
  if (!row) {
    await db.insert(signingKeys).values(newKeyRow(secrets)).onConflictDoNothing();
    row = await activeRow(db);
  }
  if (!row) throw new Error('no audit signing key');
  return signerOf(row, secrets);
};

/** Retires the active audit key and creates a new one; returns the new kid and the retired one. */
/** Runs inside the caller's transaction (the mutation path's): the advisory lock lasts until it ends. */
export const rotateAuditSigningKey = async (tx: Tx, secrets: SecretBox): Promise<{ kid: string; retiredKid: string | undefined }> => {
  const fresh = newKeyRow(secrets);
  // Serialises rotations (and first creation) across replicas.
  await tx.execute(sql`select pg_advisory_xact_lock(${AUDIT_KEY_LOCK})`);
  const [old] = await tx
    .update(signingKeys)
    .set({ retiredAt: new Date() })
    .where(and(eq(signingKeys.purpose, AUDIT_PURPOSE), isNull(signingKeys.retiredAt)))
    .returning({ kid: signingKeys.kid });
  await tx.insert(signingKeys).values(fresh);
  return { kid: fresh.kid, retiredKid: old?.kid };
};

const AUDIT_KEY_LOCK = 0x61756b31; // 'auk1'

const jwkOf = (row: { kid: string; alg: string; publicKeyPem: string }): Jwk => {
  const raw = createPublicKey(row.publicKeyPem).export({ format: 'jwk' }) as {
    kty: string;
    crv?: string;
    x?: string;
    n?: string;
    e?: string;
  };
  return { ...raw, kid: row.kid, alg: row.alg, use: 'sig' };
};

/**
 * The published keys: the active audit key, every audit key that signed a stored checkpoint, and
 * the user-token signing keys (RS256).
 */
export const publishedKeys = async (db: Reader): Promise<{ keys: Jwk[] }> => {
  const signedWith = db.selectDistinct({ kid: auditCheckpoints.signingKid }).from(auditCheckpoints);
  const rows = await db
    .select({ kid: signingKeys.kid, alg: signingKeys.alg, publicKeyPem: signingKeys.publicKeyPem })
    .from(signingKeys)
    .where(
      or(
        eq(signingKeys.purpose, USER_TOKEN_PURPOSE),
        and(eq(signingKeys.purpose, AUDIT_PURPOSE), or(isNull(signingKeys.retiredAt), inArray(signingKeys.kid, signedWith))),
      ),
    )
    .orderBy(signingKeys.createdAt, signingKeys.kid);
  return { keys: rows.map(jwkOf) };
};
