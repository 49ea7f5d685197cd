import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import proxyAddr from 'proxy-addr';

/** Name of the response header that carries the request identity (spec 4.5). */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a forwarded request id may look like: short, printable, nothing to inject into logs. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._~:@+=/-]{8,128}$/;

/**
 * The request-id generator. An id minted here looks like `req_…`. A request arriving directly from
 * one of `trustedProxies` (IPs or CIDRs) keeps the `X-Request-Id` its proxy set, when it is
 * well-formed, so one id follows a request through the proxy's and this service's logs; from any
 * other peer the header is ignored (a client must not choose the id it is logged under).
 */
export function requestIdGenerator(trustedProxies: readonly string[]): (request: IncomingMessage) => string {
  const trusted = trustedProxies.length > 0 ? proxyAddr.compile([...trustedProxies]) : null;
  return (request) => {
    const forwarded = request.headers['x-request-id'];
    const peer = request.socket.remoteAddress;
    if (trusted && peer && typeof forwarded === 'string' && ACCEPTABLE_ID.test(forwarded) && trusted(peer, 0))
      return forwarded;
    return `req_${randomBytes(12).toString('base64url')}`;
  };
}
