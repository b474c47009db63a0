import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest, by envelope encryption: every secret gets its own random 32-byte data key
 * (AES-256-GCM over the secret), and the data key is wrapped (AES-256-GCM) under a key-encryption
 * key (KEK). The stored form names the KEK by its version id (the first 16 hex digits of
 * SHA-256 of the KEK), so a key ring can hold the current KEK and previous ones:
 *
 *   v2:<kekId>:<base64(iv | tag | wrapped data key)>:<base64(iv | tag | ciphertext)>
 *
 * The first KEK of the ring (GATEWAY_KEK) wraps every new secret; previous KEKs
 * (GATEWAY_KEK_PREVIOUS) only unwrap. Rotating the KEK re-wraps the data keys only
 * (`rewrap`, run over the whole store by `bun run kek:rotate`): the ciphertexts stay as they are.
 * The legacy form `v1:<base64(iv | tag | ciphertext)>` (directly under a KEK, no id) is still read
 * by trying every KEK of the ring, and `rewrap` turns it into the v2 form.
 */

const AES = 'aes-256-gcm';

const seal = (key: Buffer, plaintext: Buffer): Buffer => {
  const iv = randomBytes(12);
  const cipher = createCipheriv(AES, key, iv);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]);
};

const open = (key: Buffer, raw: Buffer): Buffer => {
  const decipher = createDecipheriv(AES, key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
};

const decodeKek = (kekBase64: string): Buffer => {
  const key = Buffer.from(kekBase64, 'base64');
  if (key.length !== 32) throw new Error('the key-encryption key must be 32 bytes');
  return key;
};

/** The version id of a KEK (what a wrapped value names). */
export const kekId = (kekBase64: string): string => createHash('sha256').update(decodeKek(kekBase64)).digest('hex').slice(0, 16);

interface Envelope {
  kekId: string;
  wrappedKey: Buffer;
  payload: Buffer;
}

const parseV2 = (wrapped: string): Envelope | undefined => {
  const parts = wrapped.split(':');
  if (parts.length !== 4 || parts[0] !== 'v2') return undefined;
  return {
    kekId: parts[1] as string,
    wrappedKey: Buffer.from(parts[2] as string, 'base64'),
    payload: Buffer.from(parts[3] as string, 'base64'),
  };
};

export class SecretBox {
  readonly #ring: { id: string; key: Buffer }[];

  /** `kekBase64`: the current KEK; `previous`: older KEKs still accepted for unwrapping. */
  constructor(kekBase64: string, previous: readonly string[] = []) {
    const ring = [kekBase64, ...previous].map((k) => ({ id: kekId(k), key: decodeKek(k) }));
    this.#ring = ring.filter((k, i) => ring.findIndex((o) => o.id === k.id) === i);
  }

  /** The version id of the KEK that wraps new secrets. */
  get currentKekId(): string {
    return (this.#ring[0] as { id: string }).id;
  }

  #kek(id: string): Buffer {
    const k = this.#ring.find((r) => r.id === id);
    if (!k) throw new Error(`secret wrapped under an unknown key-encryption key (version ${id}): set it in GATEWAY_KEK_PREVIOUS`);
    return k.key;
  }

  #envelope(dataKey: Buffer, payload: Buffer): string {
    const current = this.#ring[0] as { id: string; key: Buffer };
    return `v2:${current.id}:${seal(current.key, dataKey).toString('base64')}:${payload.toString('base64')}`;
  }

  wrap(plaintext: string): string {
    const dataKey = randomBytes(32);
    return this.#envelope(dataKey, seal(dataKey, Buffer.from(plaintext, 'utf8')));
  }

  unwrap(wrapped: string): string {
    const env = parseV2(wrapped);
    if (env) return open(open(this.#kek(env.kekId), env.wrappedKey), env.payload).toString('utf8');
    if (wrapped.startsWith('v1:')) return this.#legacyKey(wrapped).plaintext;
    throw new Error('unknown secret format');
  }

  #legacyKey(wrapped: string): { plaintext: string } {
    const raw = Buffer.from(wrapped.slice(3), 'base64');
    for (const k of this.#ring) {
      try {
        return { plaintext: open(k.key, raw).toString('utf8') };
      } catch {
        // another KEK of the ring
      }
    }
    throw new Error('secret wrapped under an unknown key-encryption key (legacy v1 form): set it in GATEWAY_KEK_PREVIOUS');
  }

  /** True when `wrapped` is not wrapped under the current KEK (or is in the legacy form). */
  needsRewrap(wrapped: string): boolean {
    const env = parseV2(wrapped);
    return !env || env.kekId !== this.currentKekId;
  }

  /**
   * The same secret wrapped under the current KEK: the data key is unwrapped with the KEK it names
   * and wrapped again; the ciphertext is kept. A legacy v1 value gets a data key of its own.
   */
  rewrap(wrapped: string): string {
    const env = parseV2(wrapped);
    if (!env) return this.wrap(this.unwrap(wrapped));
    if (env.kekId === this.currentKekId) return wrapped;
    return this.#envelope(open(this.#kek(env.kekId), env.wrappedKey), env.payload);
  }
}

export const generateKek = (): string => randomBytes(32).toString('base64');
