import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Seals and opens webhook signing secrets for storage. */
export interface SecretBox {
  seal(secret: string): string;
  open(sealed: string): string;
}

/**
 * Webhook secrets must be readable to sign with (unlike API keys, stored as hashes), so they are
 * stored sealed: AES-256-GCM under a key derived from SIGNING_SECRET, so that a copy of Redis alone
 * (a backup, a replica) does not hold them in clear. Rotating SIGNING_SECRET makes them unreadable:
 * endpoints then need new secrets (docs/operations.md).
 */
export function createSecretBox(signingSecret: string): SecretBox {
  const key = createHmac('sha256', signingSecret).update('webhook endpoint secrets').digest();
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed) {
      const bytes = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/** A new Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
