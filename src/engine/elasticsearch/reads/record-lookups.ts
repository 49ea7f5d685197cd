import type { Client, estypes } from '@elastic/elasticsearch';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import type { Looked, RecordLookups } from '../../lookups.ts';
import { COMPLETE_RESULTS, engineCall, translateEngineError } from '../errors.ts';
import { firstString } from '../response-values.ts';

/** How an alias field is matched and which of its claimants is its holder. */
interface AliasField {
  field: string;
  /** The term a given alias is looked up by (what the index's normalizer makes of it). */
  term: (alias: string) => string;
  /** The holder first: the GETs' own order (engine.ts, findAccountIdByHandle / findPostIdByShortcode). */
  sort: estypes.Sort;
}

const HANDLE: AliasField = {
  field: 'handle',
  term: (handle) => handle.toLowerCase(),
  sort: [{ handle_observed_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
};
const SHORTCODE: AliasField = {
  field: 'shortcode',
  term: (shortcode) => shortcode,
  sort: [{ observed_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
};

/**
 * Lookups on the read aliases: one multi-search of at most two searches, the IDs (an `ids`
 * query) and the aliases (a `terms` query collapsed on the alias field, so each alias yields its
 * holder alone, by the GETs' order, however many records once claimed it).
 */
export function createRecordLookups(deps: {
  client: Client;
  postsIndex: string;
  accountsIndex: string;
}): RecordLookups {
  const { client } = deps;

  async function lookup<R extends { id: string }>(
    index: string,
    alias: AliasField,
    ids: readonly string[],
    aliases: readonly string[],
  ): Promise<Looked<R>> {
    const out: Looked<R> = { byId: new Map(), byAlias: new Map() };
    const wantedIds = [...new Set(ids)];
    const terms = [...new Set(aliases.map(alias.term))];
    const searches: estypes.MsearchRequestItem[] = [];
    if (wantedIds.length > 0) {
      searches.push(
        { index, ...COMPLETE_RESULTS },
        { query: { ids: { values: wantedIds } }, size: wantedIds.length, track_total_hits: false },
      );
    }
    if (terms.length > 0) {
      searches.push(
        { index, ...COMPLETE_RESULTS },
        {
          query: { bool: { filter: [{ terms: { [alias.field]: terms } }] } },
          collapse: { field: alias.field },
          sort: alias.sort,
          size: terms.length,
          // The collapse key: the alias as the index normalized it.
          docvalue_fields: [alias.field],
          track_total_hits: false,
        },
      );
    }
    if (searches.length === 0) return out;
    const response = await engineCall(() => client.msearch<{ record: R }>({ searches }));
    const answers = response.responses.map((answer) => {
      if ('error' in answer) throw translateEngineError(answer.error);
      return answer.hits.hits;
    });
    if (wantedIds.length > 0) {
      for (const hit of answers.shift()!) if (hit._source) out.byId.set(hit._id!, hit._source.record);
    }
    if (terms.length > 0) {
      const byTerm = new Map<string, R>();
      for (const hit of answers.shift()!) {
        const key = firstString(hit, alias.field);
        if (key !== undefined && hit._source) byTerm.set(key, hit._source.record);
      }
      for (const a of aliases) {
        const record = byTerm.get(alias.term(a));
        if (record) out.byAlias.set(a, record);
      }
    }
    return out;
  }

  return {
    accounts: (ids, handles) => lookup<AccountRecord>(deps.accountsIndex, HANDLE, ids, handles),
    posts: (ids, shortcodes) => lookup<PostRecord>(deps.postsIndex, SHORTCODE, ids, shortcodes),
  };
}
