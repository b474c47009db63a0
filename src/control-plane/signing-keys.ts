import { and, eq, isNull, lt } from 'drizzle-orm';
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, importSPKI } from 'jose';
import { randomToken } from '../core/ids.ts';
import { signingKeys } from '../store/schema/index.ts';
import type { CallInfo } from './audit-record.ts';
import type { ControlDeps, Tx } from './deps.ts';
import { systemMutation } from './mutation.ts';

/**
 * The user-token signing key ring. One active RS256 key per deployment (`signing_keys`, purpose
 * `user_token`, `retiredAt` unset; its private key wrapped with the KEK), created on first use.
 * Rotation (RotateUserTokenSigningKey) retires the active key and creates a new one: new tokens are
 * signed with the new kid, and every retired key stays in `signing_keys` — published in
 * `GET /.well-known/jwks.json` and in the data planes' configuration — for as long as a token it
 * signed can be live (the longest user-token lifetime, 365 days), so no live token is invalidated.
 * Keys retired longer ago than that are deleted by the next rotation.
 */

export const USER_TOKEN_PURPOSE = 'user_token';
/** The longest user-token lifetime: a key retired longer ago signed no live token. */
export const MAX_TOKEN_DAYS = 365;
/** How long a replica keeps using the active key it read before looking again (another replica may rotate). */
const ACTIVE_TTL_MS = 60_000;

export interface ActiveKey {
  kid: string;
  key: CryptoKey;
}

interface NewKey {
  kid: string;
  publicKeyPem: string;
  privateKeyWrapped: string;
}

const newKey = async (deps: ControlDeps): Promise<NewKey> => {
  const pair = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  return {
    kid: `uk_${randomToken(16)}`,
    publicKeyPem: await exportSPKI(pair.publicKey),
    privateKeyWrapped: deps.secrets.wrap(await exportPKCS8(pair.privateKey)),
  };
};

export class SigningKeys {
  #active: { at: number; key: Promise<ActiveKey> } | undefined;
  readonly #publics = new Map<string, Promise<CryptoKey | undefined>>();

  constructor(private readonly deps: ControlDeps) {}

  /** The active key; `cause` is the request that needed it (kept in the audit entry of its creation). */
  active(cause?: CallInfo): Promise<ActiveKey> {
    if (!this.#active || Date.now() - this.#active.at > ACTIVE_TTL_MS) {
      const key = this.#loadOrCreate(cause).catch((e: unknown) => {
        this.#active = undefined;
        throw e;
      });
      this.#active = { at: Date.now(), key };
    }
    return this.#active.key;
  }

  /** Forgets the active key (after a rotation on this replica). */
  reset(): void {
    this.#active = undefined;
  }

  publicKey(kid: string): Promise<CryptoKey | undefined> {
    let p = this.#publics.get(kid);
    if (!p) {
      p = (async () => {
        const [row] = await this.deps.db
          .select()
          .from(signingKeys)
          .where(and(eq(signingKeys.kid, kid), eq(signingKeys.purpose, USER_TOKEN_PURPOSE)))
          .limit(1);
        return row ? importSPKI(row.publicKeyPem, 'RS256') : undefined;
      })();
      // Unknown kids are not cached (a key created by another replica may appear).
      void p.then((k) => (k ? undefined : this.#publics.delete(kid))).catch(() => this.#publics.delete(kid));
      this.#publics.set(kid, p);
    }
    return p;
  }

  async #read() {
    return (
      await this.deps.db
        .select()
        .from(signingKeys)
        .where(and(eq(signingKeys.purpose, USER_TOKEN_PURPOSE), isNull(signingKeys.retiredAt)))
        .limit(1)
    )[0];
  }

  async #loadOrCreate(cause: CallInfo | undefined): Promise<ActiveKey> {
    let row = await this.#read();
    if (!row) {
      const k = await newKey(this.deps);
      // Data planes verify user tokens on inference with the public keys: a new key is configuration.
      // The gateway creates it on its own: a system mutation, audited with actorType system.
      await systemMutation(
        this.deps,
        { actionType: 'CREATE', resourceType: 'signing_key', resourceId: k.kid },
        async ({ tx, change }) => {
          const inserted = await tx
            .insert(signingKeys)
            .values({
              kid: k.kid,
              purpose: USER_TOKEN_PURPOSE,
              alg: 'RS256',
              publicKeyPem: k.publicKeyPem,
              privateKeyWrapped: k.privateKeyWrapped,
            })
            .onConflictDoNothing()
            .returning({ kid: signingKeys.kid });
          if (inserted.length === 0) return undefined;
          await change({ resource: 'signingKey' as const, entityId: k.kid });
          return k.kid;
        },
        cause,
      );
      row = await this.#read();
    }
    if (!row) throw new Error('no signing key');
    return { kid: row.kid, key: await importPKCS8(this.deps.secrets.unwrap(row.privateKeyWrapped), 'RS256') };
  }
}

const rings = new WeakMap<ControlDeps, SigningKeys>();
export const ringOf = (deps: ControlDeps): SigningKeys => {
  let r = rings.get(deps);
  if (!r) {
    r = new SigningKeys(deps);
    rings.set(deps, r);
  }
  return r;
};

/**
 * Rotation, inside the caller's transaction: retires the active key (the row is locked), inserts a
 * new one, deletes keys retired more than MAX_TOKEN_DAYS ago. Returns the new kid, the retired one
 * ('' when there was none) and the kids deleted.
 */
export const rotateSigningKey = async (
  deps: ControlDeps,
  tx: Tx,
  at: Date,
): Promise<{ kid: string; retiredKid: string; deletedKids: string[] }> => {
  const k = await newKey(deps);
  const [current] = await tx
    .select({ kid: signingKeys.kid })
    .from(signingKeys)
    .where(and(eq(signingKeys.purpose, USER_TOKEN_PURPOSE), isNull(signingKeys.retiredAt)))
    .limit(1)
    .for('update');
  if (current) await tx.update(signingKeys).set({ retiredAt: at }).where(eq(signingKeys.kid, current.kid));
  await tx.insert(signingKeys).values({
    kid: k.kid,
    purpose: USER_TOKEN_PURPOSE,
    alg: 'RS256',
    publicKeyPem: k.publicKeyPem,
    privateKeyWrapped: k.privateKeyWrapped,
  });
  const deleted = await tx
    .delete(signingKeys)
    .where(
      and(eq(signingKeys.purpose, USER_TOKEN_PURPOSE), lt(signingKeys.retiredAt, new Date(at.getTime() - MAX_TOKEN_DAYS * 86_400_000))),
    )
    .returning({ kid: signingKeys.kid });
  return { kid: k.kid, retiredKid: current?.kid ?? '', deletedKids: deleted.map((d) => d.kid) };
};
