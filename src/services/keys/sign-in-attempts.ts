import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

/**
 * Failed sign-in attempts, counted per account (email) and per client address in Redis, so every
 * API node shares the count: the scheme of rate-limiter-flexible's "login endpoint protection".
 * An email is limited whether or not a holder has it, so the limit itself reveals nothing.
 */
export interface SignInAttempts {
  /** Seconds until `email` from `address` may try again; 0 when it may now. */
  blockedFor(email: string, address: string): Promise<number>;
  /** Counts a failure against both. */
  failed(email: string, address: string): Promise<void>;
  /** A success clears the account's count (not the address's: one success must not reset a spray). */
  succeeded(email: string): Promise<void>;
}

/** Limits of {@link createSignInAttempts}. */
export interface SignInAttemptLimits {
  /** Failures per account per 15 minutes before it is blocked for 15 minutes. */
  perAccount: number;
  /** Failures per address per hour before it is blocked for an hour. */
  perAddress: number;
}

/** Creates the Redis-backed {@link SignInAttempts}. */
export function createSignInAttempts({
  redis,
  prefix,
  limits,
}: {
  redis: Redis;
  prefix: string;
  limits: SignInAttemptLimits;
}): SignInAttempts {
  const byAccount = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:signin:account`,
    points: limits.perAccount,
    duration: 15 * 60,
    blockDuration: 15 * 60,
  });
  const byAddress = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:signin:address`,
    points: limits.perAddress,
    duration: 60 * 60,
    blockDuration: 60 * 60,
  });
  const spent =
    (limiter: RateLimiterRedis, points: number) => (res: { consumedPoints: number; msBeforeNext: number } | null) =>
      res !== null && res.consumedPoints >= points ? Math.ceil(res.msBeforeNext / 1000) : 0;

  return {
    async blockedFor(email, address) {
      const [account, client] = await Promise.all([byAccount.get(email), byAddress.get(address)]);
      return Math.max(spent(byAccount, limits.perAccount)(account), spent(byAddress, limits.perAddress)(client));
    },
    async failed(email, address) {
      // consume() rejects once over the limit; the block it sets is what blockedFor reads.
      await Promise.allSettled([byAccount.consume(email), byAddress.consume(address)]);
    },
    async succeeded(email) {
      await byAccount.delete(email);
    },
  };
}
