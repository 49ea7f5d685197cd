import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** Why a webhook URL or address is refused (a 422 detail at creation, a delivery error later). */
export class RefusedWebhookAddress extends Error {}

/** Address ranges a webhook may reach without WEBHOOK_ALLOW_PRIVATE: the public internet only. */
const PUBLIC_RANGES = new Set(['unicast']);

/** True when `address` (an IP literal) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  return PUBLIC_RANGES.has(parsed.range());
}

/** The host of `url` as an IP literal (brackets of IPv6 removed), or null for a name. */
function literalHost(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : null;
}

/**
 * Checks a webhook URL's shape: absolute http(s), no credentials, no fragment; https unless it
 * names a private or loopback address the operator allowed (`allowPrivate`). Throws
 * RefusedWebhookAddress with the reason.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedWebhookAddress('expected an absolute https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RefusedWebhookAddress('expected an https URL');
  if (url.username || url.password) throw new RefusedWebhookAddress('a webhook URL may not carry credentials');
  if (url.hash) throw new RefusedWebhookAddress('a webhook URL may not carry a fragment');
  const literal = literalHost(url);
  const local = url.hostname === 'localhost' || (literal !== null && !isPublicAddress(literal));
  if (local && !allowPrivate)
    throw new RefusedWebhookAddress(
      'loopback and private addresses are refused (the operator may allow them: WEBHOOK_ALLOW_PRIVATE)',
    );
  if (url.protocol === 'http:' && !local) throw new RefusedWebhookAddress('expected an https URL');
  return url;
}

/**
 * The address to connect to for `url`, resolved now (every attempt resolves again) and checked:
 * a name that resolves to any private or loopback address is refused unless allowed, so a DNS
 * answer cannot point deliveries inside the network. The connection is then pinned to it.
 */
export async function resolveWebhookAddress(
  url: URL,
  allowPrivate: boolean,
): Promise<{ address: string; family: 4 | 6 }> {
  const literal = literalHost(url);
  const answers = literal
    ? [{ address: literal, family: ipaddr.parse(literal).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(url.hostname, { all: true, verbatim: true }).catch(() => {
        throw new RefusedWebhookAddress(`${url.hostname} does not resolve`);
      });
  if (answers.length === 0) throw new RefusedWebhookAddress(`${url.hostname} does not resolve`);
  if (!allowPrivate && answers.some((a) => !isPublicAddress(a.address)))
    throw new RefusedWebhookAddress(`${url.hostname} resolves to a private or loopback address`);
  const first = answers[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** How long creating an endpoint waits for its host name to resolve. */
const RESOLVE_AT_CREATION_MS = 2000;

/**
 * A new endpoint's URL: its shape ({@link checkWebhookUrl}), and where its host resolves to now: a
 * name resolving to a private or loopback address is refused as a literal one is. A name that does
 * not resolve (yet), or not within 2 s, is accepted: every delivery resolves and checks it again.
 */
export async function checkNewWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = checkWebhookUrl(raw, allowPrivate);
  let timer: NodeJS.Timeout | undefined;
  const resolved = resolveWebhookAddress(url, allowPrivate).catch((error: unknown) => {
    if (error instanceof RefusedWebhookAddress && /resolves to/.test(error.message)) throw error;
  });
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, RESOLVE_AT_CREATION_MS)));
  await Promise.race([resolved, waited]).finally(() => clearTimeout(timer));
  return url;
}
