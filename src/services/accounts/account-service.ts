import type { Account, AccountHistory } from '../../contract/api.ts';
import { accountRef, isServiceId } from '../../contract/ids.ts';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import type { HistoryReads } from '../../engine/history.ts';
import type { RecordLookups } from '../../engine/lookups.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { AccountUnavailableError, NotTrackedError } from '../../internal/errors.ts';
import { accountAvailability } from '../../domain/availability.ts';
import { bucketHistory } from '../../domain/history.ts';
import type { AccountRecord } from '../../domain/records.ts';
import {
  MAX_HISTORY_POINTS,
  resolveHistoryQuery,
  tooManyPoints,
  type HistoryQueryInput,
} from '../../query/history-request.ts';
import type { AccountLookupRequest } from '../../query/lookup-request.ts';
import { renderAccount } from '../../render/account.ts';
import { renderLookup, type LookupResult } from '../../render/lookup.ts';
import { renderHistory } from '../../render/history.ts';

/** Reads accounts (spec 4.4) and their metric history. */
export interface AccountService {
  /** The account by service ID, handle or `@handle`. */
  get(idOrHandle: string): Promise<Account>;
  /** The account's metric history (a private account's too: counters are public profile facts). */
  history(idOrHandle: string, query: HistoryQueryInput): Promise<AccountHistory>;
  /**
   * Accounts by handle and by ID in one engine request: the ones get account would answer with a
   * record, in the order asked (handles first), each once; the other entries as sent.
   */
  lookup(request: AccountLookupRequest): Promise<LookupResult<Account>>;
}

/** Creates the account service. */
export function createAccountService(deps: {
  reads: Pick<RecordReads, 'accounts' | 'findAccountIdByHandle'>;
  lookups: Pick<RecordLookups, 'accounts'>;
  history: HistoryReads;
  signer: MediaUrlSigner;
  now?: () => Date;
}): AccountService {
  const now = deps.now ?? (() => new Date());

  /** The servable account `idOrHandle` names; get account's problems otherwise. */
  async function resolve(idOrHandle: string): Promise<AccountRecord> {
    const ref = accountRef(idOrHandle);
    const id = ref?.kind === 'alias' ? await deps.reads.findAccountIdByHandle(ref.alias) : (ref?.id ?? null);
    const record = id === null ? null : ((await deps.reads.accounts.get([id])).get(id) ?? null);
    switch (accountAvailability(record)) {
      case 'servable':
        return record!;
      case 'unavailable':
        throw new AccountUnavailableError(
          `This account is ${record!.status!.v} as last observed at ${record!.status!.t}; it is no longer served.`,
        );
      default:
        throw new NotTrackedError(
          'No tracked account has this ID or handle. This is not a claim that the account is absent from the platform.',
        );
    }
  }

  return {
    async get(idOrHandle) {
      return renderAccount(await resolve(idOrHandle), deps.signer);
    },

    async history(idOrHandle, input) {
      const query = resolveHistoryQuery(input, now());
      const { id } = await resolve(idOrHandle);
      const points = await deps.history.points('account', id, query.from, query.to, MAX_HISTORY_POINTS);
      if (points === null) throw tooManyPoints();
      return renderHistory(id, query, bucketHistory(points, query.interval));
    },

    async lookup(request) {
      const handles = request.handles ?? [];
      const ids = request.ids ?? [];
      // A handle is read as `GET /accounts/@handle` reads it; an ID entry must be an ID.
      const aliasOf = (handle: string) => {
        const ref = accountRef(`@${handle.replace(/^@/, '')}`);
        return ref?.kind === 'alias' ? ref.alias : null;
      };
      const aliases = handles.map(aliasOf);
      const found = await deps.lookups.accounts(
        ids.filter((id) => isServiceId('account', id)),
        aliases.filter((a): a is string => a !== null),
      );
      const asked = [
        ...handles.map((entry, i) => ({
          entry,
          record: aliases[i] === null ? undefined : found.byAlias.get(aliases[i]!),
        })),
        ...ids.map((entry) => ({ entry, record: found.byId.get(entry) })),
      ];
      return renderLookup(
        asked,
        (record) => accountAvailability(record) === 'servable',
        (record) => renderAccount(record, deps.signer),
      );
    },
  };
}
