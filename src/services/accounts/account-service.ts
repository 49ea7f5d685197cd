import type { Account } from '../../contract/api.ts';
import { hasIdPrefix, isServiceId } from '../../contract/ids.ts';
import type { DeliverySigner } from '../../delivery/signer.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { AccountUnavailableError, NotTrackedError } from '../../internal/errors.ts';
import { accountAvailability } from '../../domain/availability.ts';
import { renderAccount } from '../../render/account.ts';

const HANDLE = /^@?[^\s@/?#]{1,100}$/;

/** Reads accounts (spec 4.4). */
export interface AccountService {
  /** The account by service ID, handle or `@handle`. */
  get(idOrHandle: string): Promise<Account>;
}

/** Creates the account service. */
export function createAccountService(deps: {
  reads: Pick<RecordReads, 'accounts' | 'findAccountIdByHandle'>;
  signer: DeliverySigner;
}): AccountService {
  return {
    async get(idOrHandle) {
      let id: string | null;
      if (hasIdPrefix('account', idOrHandle)) {
        id = isServiceId('account', idOrHandle) ? idOrHandle : null;
      } else {
        id = HANDLE.test(idOrHandle) ? await deps.reads.findAccountIdByHandle(idOrHandle.replace(/^@/, '')) : null;
      }
      const record = id === null ? null : ((await deps.reads.accounts.get([id])).get(id) ?? null);
      switch (accountAvailability(record)) {
        case 'servable':
          return renderAccount(record!, deps.signer);
        case 'unavailable':
          throw new AccountUnavailableError(
            `This account is ${record!.status!.v} as last observed at ${record!.status!.t}; it is no longer served.`,
          );
        default:
          throw new NotTrackedError(
            'No tracked account has this ID or handle. This is not a claim that the account is absent from the platform.',
          );
      }
    },
  };
}
