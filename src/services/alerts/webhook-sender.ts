import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { fieldOf } from '../../internal/typed-objects.ts';
import { isPublicAddress, RefusedWebhookAddress, resolveWebhookAddress } from './webhook-address.ts';

/** How long one delivery attempt may take, connection to the last byte read. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The most of a receiver's response read (the rest is discarded). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** What one attempt came to. */
export interface SendOutcome {
  /** `delivered`: 2xx; `gone`: 410 (disable the endpoint); `retry`: worth another attempt; `failed`: not. */
  result: 'delivered' | 'gone' | 'retry' | 'failed';
  status: number | null;
  latencyMs: number;
  error: string | null;
  /** The receiver's `Retry-After`, in ms (429 and 503 mostly). */
  retryAfterMs: number | null;
}

/** A signing secret: `whsec_…` as stored, or its key made once for many messages ({@link signingKey}). */
export type SigningSecret = string | KeyObject;

/** One signed message: its id (the event id), body, and the secrets that sign it. */
export interface WebhookMessage {
  id: string;
  body: string;
  /** Every secret currently signing (several while earlier secrets of a rotation still do). */
  secrets: readonly SigningSecret[];
}

/** The prefix of a Standard Webhooks secret; the rest is the key, base64-encoded. */
const SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of a `whsec_…` secret, to sign many messages with: decoding the secret and
 * importing its key for each message cost about as much as the signature itself (~8 µs of ~15).
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(
    Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'),
  );
}

/**
 * The `webhook-*` headers of Standard Webhooks 1.0 for `message`, signed at `now`: for each secret,
 * `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret's key, as the
 * `standardwebhooks` library signs (its `sign` is the reference the tests compare with, byte for
 * byte, and verify with).
 *
 * Not that library's `sign`: it hashes in JavaScript, ~20 times node:crypto's time (bench/alerts.md).
 */
export function signatureHeaders(message: WebhookMessage, now: Date): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signed = `${message.id}.${timestamp}.${message.body}`;
  const signatures = message.secrets.map((secret) => {
    const key = typeof secret === 'string' ? signingKey(secret) : secret;
    return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  });
  return {
    'webhook-id': message.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}

/** `Retry-After` as milliseconds (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Classifies a response status: 2xx delivered, 410 gone, 429/5xx retried, the rest failed (3xx too: redirects are not followed). */
function resultOf(status: number): SendOutcome['result'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  if (status === 429 || status >= 500) return 'retry';
  return 'failed';
}

/** The address refused, or a connection failure's codes (never a secret, never a header). */
function failureDetail(error: unknown): string {
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    if (e instanceof RefusedWebhookAddress) return e.message;
  const code = fieldOf(error, 'code') ?? fieldOf(fieldOf(error, 'cause'), 'code');
  return typeof code === 'string' && code !== '' ? `connection failed (${code})` : 'connection failed';
}

/** Sends signed messages to webhook receivers. */
export interface WebhookSender {
  send(this: void, url: URL, message: WebhookMessage): Promise<SendOutcome>;
  /** Closes every kept connection. */
  close(this: void): Promise<void>;
}

/**
 * Creates the sender: POSTs one signed message per call, 10 s for the whole exchange, no redirects,
 * at most 64 KiB of the answer read; never throws (every outcome is a result). Connections are
 * kept between deliveries (undici's pools, one per origin, closed after `keepAliveMs` idle or the
 * receiver's `Keep-Alive`): without them each delivery paid a new connection (a TLS handshake on
 * https) and its close, ~0.6 ms of CPU a delivery on loopback HTTP (bench/alerts.md).
 *
 * Every new connection resolves the host again and connects only to an address it checked (public,
 * unless `allowPrivate`): a DNS answer that changes between a check and the connection (rebinding)
 * cannot point a delivery inside the network, and a kept connection only ever serves the address
 * checked when it was made. A literal address is checked on each attempt.
 */
export function createWebhookSender(options: {
  allowPrivate: boolean;
  userAgent: string;
  timeoutMs?: number;
  keepAliveMs?: number;
}): WebhookSender {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolveWebhookAddress(new URL(`http://${hostname}`), options.allowPrivate).then(
      (pinned) =>
        lookupOptions.all
          ? // With `all`, node's lookup callback takes an address list (the overload TypeScript cannot pick).
            (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [pinned])
          : callback(null, pinned.address, pinned.family),
      // The lookup callback's error type; a resolution failure is an errno error.
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
  const agent = new Agent({
    // A socket idles undici's default 4 s (under the 5 s most servers keep one): reusing a socket
    // the receiver is closing would fail that delivery.
    ...(options.keepAliveMs !== undefined
      ? { keepAliveTimeout: options.keepAliveMs, keepAliveMaxTimeout: options.keepAliveMs }
      : {}),
    connect: { lookup: checkedLookup },
  });

  return {
    async send(url, message) {
      const started = performance.now();
      const outcome = (fields: Omit<SendOutcome, 'latencyMs'>): SendOutcome => ({
        ...fields,
        latencyMs: Math.round(performance.now() - started),
      });
      try {
        const host = url.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) && !options.allowPrivate && !isPublicAddress(host))
          throw new RefusedWebhookAddress(`${host} is a private or loopback address`);
        const response = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': options.userAgent,
            ...signatureHeaders(message, new Date()),
          },
          body: message.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: AbortSignal.timeout(timeoutMs),
        });
        let read = 0;
        for await (const chunk of response.body) {
          const bytes: unknown = chunk;
          read += bytes instanceof Uint8Array ? bytes.length : 0;
          if (read >= MAX_RESPONSE_BYTES) break;
        }
        response.body.destroy();
        const result = resultOf(response.statusCode);
        return outcome({
          result,
          status: response.statusCode,
          error: result === 'delivered' ? null : `HTTP ${response.statusCode}`,
          retryAfterMs: retryAfterMs(response.headers['retry-after']),
        });
      } catch (error) {
        const timedOut = error instanceof Error && /abort|timeout/i.test(`${error.name} ${error.message}`);
        const detail = timedOut ? `no answer within ${timeoutMs / 1000} s` : failureDetail(error);
        return outcome({ result: 'retry', status: null, error: detail, retryAfterMs: null });
      }
    },
    close: () => agent.close().catch(() => undefined),
  };
}
