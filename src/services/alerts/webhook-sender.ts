import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { Agent, request } from 'undici';
import { RefusedWebhookAddress, resolveWebhookAddress } from './webhook-address.ts';

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
  /** Every secret currently signing (two during a rotation's overlap). */
  secrets: readonly SigningSecret[];
}

/** The prefix of a Standard Webhooks secret; the rest is the key, base64-encoded. */
const SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of a `whsec_…` secret, to sign many messages with: decoding the secret and
 * importing its key for each message cost about as much as the signature itself (~8 µs of ~15,
 * 2026-11-28).
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
 * Why not that library's `sign`: it hashes in JavaScript (fast-sha256), ~100 µs for a 2 KB event
 * against ~5 µs with node:crypto; at 9,000 deliveries a round of the alerts bench it was 0.9 of
 * the saved searches' ~19 extra CPU-s (bench/alerts.md).
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

/** How one attempt is made. */
export interface SendOptions {
  allowPrivate: boolean;
  userAgent: string;
  timeoutMs?: number;
}

/** A dispatcher whose connections go to `pinned` whatever the URL's name resolves to later. */
function pinnedAgent(pinned: { address: string; family: 4 | 6 }, options: Agent.Options = {}): Agent {
  return new Agent({
    ...options,
    connect: {
      // Pinned: whatever the name resolves to by now, the checked address is the one connected to.
      lookup: (_host, opts, callback) =>
        (opts as { all?: boolean }).all
          ? (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned])
          : callback(null, pinned.address, pinned.family),
    },
  });
}

/**
 * POSTs one signed message to `url` over `agentFor(address)`: the address resolved and checked for
 * this attempt, and the connection made to it (TLS still verifies the URL's host name), 10 s for
 * the whole exchange, no redirects, at most 64 KiB of the answer read. Never throws: every outcome
 * is a result.
 */
async function attempt(
  url: URL,
  message: WebhookMessage,
  options: SendOptions,
  agentFor: (pinned: { address: string; family: 4 | 6 }) => { agent: Agent; done: () => void },
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  let pinned: { address: string; family: 4 | 6 };
  try {
    pinned = await resolveWebhookAddress(url, options.allowPrivate);
  } catch (error) {
    const refused = error instanceof RefusedWebhookAddress;
    const detail = refused ? error.message : 'address resolution failed';
    return { result: 'retry', status: null, latencyMs: elapsed(), error: detail, retryAfterMs: null };
  }
  const { agent, done } = agentFor(pinned);
  try {
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
      read += (chunk as Buffer).length;
      if (read >= MAX_RESPONSE_BYTES) break;
    }
    response.body.destroy();
    const result = resultOf(response.statusCode);
    return {
      result,
      status: response.statusCode,
      latencyMs: elapsed(),
      error: result === 'delivered' ? null : `HTTP ${response.statusCode}`,
      retryAfterMs: retryAfterMs(response.headers['retry-after']),
    };
  } catch (error) {
    const timedOut = error instanceof Error && /abort|timeout/i.test(`${error.name} ${error.message}`);
    const detail = timedOut ? `no answer within ${timeoutMs / 1000} s` : connectionDetail(error);
    return { result: 'retry', status: null, latencyMs: elapsed(), error: detail, retryAfterMs: null };
  } finally {
    done();
  }
}

/** One attempt on a connection of its own, closed afterwards. */
export function sendWebhook(url: URL, message: WebhookMessage, options: SendOptions): Promise<SendOutcome> {
  return attempt(url, message, options, (pinned) => {
    const agent = pinnedAgent(pinned, { connections: 1 });
    return { agent, done: () => void agent.close().catch(() => undefined) };
  });
}

/** Attempts over connections kept open between deliveries. */
export interface WebhookSender {
  send(this: void, url: URL, message: WebhookMessage, options: SendOptions): Promise<SendOutcome>;
  /** Closes every kept connection. */
  close(this: void): Promise<void>;
}

/**
 * Creates a sender that keeps connections to receivers open between deliveries, one pool per
 * origin and resolved address: every attempt still resolves and checks the address, and a pool
 * only ever connects to the address it was made for, so an answer that changes (DNS rebinding)
 * gets a pool of its own, checked. Without it each delivery paid a new connection (a TLS
 * handshake on https) and its close: undici took ~0.6 ms of CPU a delivery on loopback HTTP
 * (bench/alerts.md). Pools idle for `idleMs` are closed; at most `maxPools` are kept (the least
 * recently used closed first); a socket is reused within undici's keep-alive (4 s by default, or
 * what the receiver's `Keep-Alive` says).
 */
export function createWebhookSender(options: { idleMs?: number; maxPools?: number } = {}): WebhookSender {
  const idleMs = options.idleMs ?? 30_000;
  const maxPools = options.maxPools ?? 1000;
  const pools = new Map<string, { agent: Agent; timer: NodeJS.Timeout }>();
  /** Forgets a pool and closes it once its requests in flight are answered. */
  const retire = async (key: string): Promise<void> => {
    const pool = pools.get(key);
    if (!pool) return;
    pools.delete(key);
    clearTimeout(pool.timer);
    await pool.agent.close().catch(() => undefined);
  };
  const poolFor = (origin: string, pinned: { address: string; family: 4 | 6 }): Agent => {
    const key = `${origin} ${pinned.address}`;
    const pool = pools.get(key);
    if (pool) {
      pools.delete(key); // re-inserted last: the map's order is the recency order
      clearTimeout(pool.timer);
    }
    // A socket itself idles undici's default 4 s (under the 5 s most servers keep one): reusing a
    // socket the receiver is closing would fail that delivery.
    const agent = pool?.agent ?? pinnedAgent(pinned, { connections: 8 });
    const timer = setTimeout(() => void retire(key), idleMs).unref();
    pools.set(key, { agent, timer });
    while (pools.size > maxPools) void retire(pools.keys().next().value!);
    return agent;
  };
  return {
    send: (url, message, sendOptions) =>
      attempt(url, message, sendOptions, (pinned) => ({ agent: poolFor(url.origin, pinned), done: () => undefined })),
    async close() {
      await Promise.all([...pools.keys()].map(retire));
    },
  };
}

/** A connection failure in a few words (codes only: never a secret, never a header). */
function connectionDetail(error: unknown): string {
  const code =
    (error as { code?: string; cause?: { code?: string } }).code ??
    (error as { cause?: { code?: string } }).cause?.code;
  return code ? `connection failed (${code})` : 'connection failed';
}
