import { RouteNotFoundError } from '../../internal/errors.ts';
import type { CreatedKey, KeyService, KeySummary } from './key-service.ts';
import type { KeyLimits } from './key-store.ts';
import type { DailyUsage, UsageReader } from './usage-reader.ts';
import type { Holder } from './holder-service.ts';

/** A key as its holder sees it in the dashboard. */
export interface HolderKey extends KeySummary {
  /** What the key starts with (`ssk_<id>_…`): enough to find it in a config, nothing secret. */
  prefix: string;
  lastUsedAt: string | null;
  /** The limits in force: the key's own, else the service's defaults (0: unlimited). */
  effectiveLimits: { search: number; read: number };
}

/** One key's usage over the period asked for. */
export interface HolderKeyUsage {
  key: HolderKey;
  days: DailyUsage[];
}

/** What a signed-in holder may do with keys: only ever their own. */
export interface HolderKeys {
  list(holder: Holder): Promise<HolderKey[]>;
  create(holder: Holder, input: { name: string; scopes: readonly string[] }): Promise<CreatedKey>;
  /** Throws a 404 for a key that is not the holder's, exactly as for a key that does not exist. */
  revoke(holder: Holder, keyId: string): Promise<void>;
  /** Usage of each of the holder's keys over the last `days` days. */
  usage(holder: Holder, days: number): Promise<HolderKeyUsage[]>;
}

/** Dependencies of {@link createHolderKeys}. */
export interface HolderKeysDeps {
  keys: Pick<KeyService, 'list' | 'create' | 'revoke'>;
  usage: UsageReader;
  /** The service's per-minute defaults, shown where a key has no limit of its own. */
  defaultLimits: { search: number; read: number };
}

function keyPrefix(id: string): string {
  return `ssk_${id.slice('key_'.length)}_…`;
}

function effective(limits: KeyLimits, defaults: { search: number; read: number }) {
  return { search: limits.search ?? defaults.search, read: limits.read ?? defaults.read };
}

/** Creates {@link HolderKeys} on the one key service the CLI also uses. */
export function createHolderKeys({ keys, usage, defaultLimits }: HolderKeysDeps): HolderKeys {
  async function list(holder: Holder): Promise<HolderKey[]> {
    const own = await keys.list({ owner: holder.email });
    const lastUsed = await usage.lastUsed(own.map((k) => k.id));
    // Newest first, as a holder looks for the key just made.
    return own.reverse().map((k) => ({
      ...k,
      prefix: keyPrefix(k.id),
      lastUsedAt: lastUsed.get(k.id) ?? null,
      effectiveLimits: effective(k.limits, defaultLimits),
    }));
  }

  return {
    list,
    create(holder, input) {
      return keys.create({ owner: holder.email, name: input.name, scopes: input.scopes });
    },
    async revoke(holder, keyId) {
      const own = await keys.list({ owner: holder.email });
      if (!own.some((k) => k.id === keyId)) throw new RouteNotFoundError('No such key.');
      await keys.revoke(keyId);
    },
    async usage(holder, days) {
      const own = await list(holder);
      const daily = await usage.daily(
        own.map((k) => k.id),
        days,
      );
      return own.map((key) => ({ key, days: daily.get(key.id) ?? [] }));
    },
  };
}
