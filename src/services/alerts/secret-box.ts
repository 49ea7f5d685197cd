import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Seals and opens webhook signing secrets for storage. */
export interface SecretBox {
  seal(secret: string): string;
  /**
   * The secret sealed in `sealed`, and whether it was sealed under an earlier key of the keyring
   * (`stale`: worth sealing again under the current one). Throws when no key of the keyring opens it.
   */
  open(sealed: string): { secret: string; stale: boolean };
}

/** Thrown when no key of the keyring opens a sealed secret. */
export class SealedSecretUnreadable extends Error {
  constructor() {
    super(
      'the signing secret cannot be opened: it was sealed under a SIGNING_SECRET that is neither the current one nor in SIGNING_SECRET_PREVIOUS',
    );
    this.name = 'SealedSecretUnreadable';
  }
}

const keyOf = (signingSecret: string) =>
  createHmac('sha256', signingSecret).update('webhook endpoint secrets').digest();

/**
 * Webhook secrets must be readable to sign with (unlike API keys, stored as hashes), so they are
 * stored sealed: AES-256-GCM under a key derived from SIGNING_SECRET, so that a copy of Redis alone
 * (a backup, a replica) does not hold them in clear. `keyring` is SIGNING_SECRET first, then the
 * secrets it replaced (SIGNING_SECRET_PREVIOUS): secrets sealed under any of them open, so changing
 * SIGNING_SECRET never stops a delivery; each is sealed again under the current one when next
 * used (webhook-delivery.ts, a rotation), after which the previous can be dropped
 * (docs/operations.md, "Changing SIGNING_SECRET").
 */
export function createSecretBox(keyring: readonly string[]): SecretBox {
  const keys = keyring.map(keyOf);
  if (keys.length === 0) throw new Error('createSecretBox: an empty keyring');
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys[0]!, iv);
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed) {
      const bytes = Buffer.from(sealed, 'base64url');
      for (const [i, key] of keys.entries()) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
          decipher.setAuthTag(bytes.subarray(12, 28));
          const secret = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
          return { secret, stale: i > 0 };
        } catch {
          // Not sealed under this key (the authentication tag does not verify): the next one.
        }
      }
      throw new SealedSecretUnreadable();
    },
  };
}

/** A new Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
