import type { FacetEngine } from '../../engine/facets.ts';
import { and } from '../../query/ast.ts';
import type { FacetSpec } from '../../query/facet-request.ts';
import { labelOf, TAXONOMIES, TAXONOMY_MAX_ENTRIES, type TaxonomyName } from '../../query/taxonomies.ts';

/** One ID of a dictionary. */
export interface TaxonomyEntry {
  id: string;
  label: string;
  /** Accounts or posts (the taxonomy's `counted`) carrying it now. */
  count: number;
}

/** A dictionary (the route adds `request_id`). */
export interface TaxonomyList {
  data: TaxonomyEntry[];
  counted: 'accounts' | 'posts';
}

/** The dictionaries: every ID the filters find records by, with how many records carry it. */
export interface TaxonomyService {
  list(name: TaxonomyName): Promise<TaxonomyList>;
}

/**
 * Counts each dictionary as a facet of an empty search of its scope: the facet engine's exact
 * counts, over the records that search can return (servable; for accounts, public), on the same
 * snapshot first pages read, so an intake acknowledged with `?wait=true` is counted. Most carried
 * first, ties by ID; IDs no record carries are not listed (`value: null`, the records without
 * one, neither).
 */
export function createTaxonomyService(deps: {
  facets: Pick<FacetEngine, 'postFacets' | 'accountFacets'>;
  keepAliveSeconds: number;
}): TaxonomyService {
  return {
    async list(name) {
      const taxonomy = TAXONOMIES[name];
      const { field } = taxonomy;
      const facet: FacetSpec = {
        kind: 'terms',
        name,
        field: field.field,
        type: field.type,
        size: TAXONOMY_MAX_ENTRIES,
      };
      const scope = { query: null, filter: and([]), sort: null };
      const counts =
        taxonomy.counted === 'accounts'
          ? await deps.facets.accountFacets({ ...scope, posts: null }, [facet], {
              ranking: { kind: 'lexical' },
              keepAliveSeconds: deps.keepAliveSeconds,
            })
          : await deps.facets.postFacets(scope, [facet], {
              ranking: { kind: 'lexical' },
              keepAliveSeconds: deps.keepAliveSeconds,
            });
      const data = (counts.facets[name] ?? [])
        .flatMap((bucket) =>
          typeof bucket.value === 'string' && bucket.count > 0
            ? [{ id: bucket.value, label: labelOf(taxonomy.labels, bucket.value), count: bucket.count }]
            : [],
        )
        .sort((a, b) => b.count - a.count || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return { data, counted: taxonomy.counted };
    },
  };
}
