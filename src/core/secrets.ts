import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Wraps secrets at rest with the key-encryption key (GATEWAY_KEK, 32 bytes): AES-256-GCM,
 * stored as `v1:<base64(iv | tag | ciphertext)>`.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(kekBase64: string) {
    const key = Buffer.from(kekBase64, 'base64');
    if (key.length !== 32) throw new Error('the key-encryption key must be 32 bytes');
    this.#key = key;
  }

  wrap(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64')}`;
  }

  unwrap(wrapped: string): string {
    if (!wrapped.startsWith('v1:')) throw new Error('unknown secret format');
    const raw = Buffer.from(wrapped.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

export const generateKek = (): string => randomBytes(32).toString('base64');
