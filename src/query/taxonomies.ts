import { z } from 'zod';
import { FILTER_FIELDS, type FieldDef } from './fields.ts';

/**
 * The dictionaries (`GET /v1/social/taxonomies/{name}`): for each, the filter field whose values it
 * lists. The filter table (fields.ts) is the one source: a taxonomy's IDs are the values that
 * filter matches, counted over the records a search of its scope can return, so a picker built
 * from it never offers a value its filter would not find, and an ID no registry here knows (a new
 * classification from the pipeline) is listed as soon as a record carries it.
 */
export const TAXONOMY_NAMES = ['niches', 'topics', 'languages', 'countries', 'formats', 'offer_types'] as const;
export type TaxonomyName = (typeof TAXONOMY_NAMES)[number];

/** How an ID is named for people. */
export type LabelKind = 'language' | 'region' | 'classification';

/** One taxonomy: the filter field it lists, and what its counts count. */
export interface Taxonomy {
  name: TaxonomyName;
  field: FieldDef;
  /** `accounts`: servable public accounts (account search's scope); `posts`: servable posts. */
  counted: 'accounts' | 'posts';
  labels: LabelKind;
}

const taxonomy = (name: TaxonomyName, field: FieldDef, labels: LabelKind): Taxonomy => ({
  name,
  field,
  counted: field.field.startsWith('account.') ? 'accounts' : 'posts',
  labels,
});

/**
 * Niches and countries are facts of accounts (`account.filters`, and as author facts in post
 * search); topics, formats, offer types and a post's language are facts of posts. Languages are
 * counted by the posts written in them (`primary_language`): an account's publishing languages
 * are derived from its posts.
 */
export const TAXONOMIES: Readonly<Record<TaxonomyName, Taxonomy>> = Object.freeze({
  niches: taxonomy('niches', FILTER_FIELDS.account.niches!, 'classification'),
  topics: taxonomy('topics', FILTER_FIELDS.post.topics!, 'classification'),
  languages: taxonomy('languages', FILTER_FIELDS.post.primary_language!, 'language'),
  countries: taxonomy('countries', FILTER_FIELDS.account.country_codes!, 'region'),
  formats: taxonomy('formats', FILTER_FIELDS.post.format!, 'classification'),
  offer_types: taxonomy('offer_types', FILTER_FIELDS.post.offer_types!, 'classification'),
});

/** The most IDs one dictionary lists (the most carried first): a bound, far above any registry seen. */
export const TAXONOMY_MAX_ENTRIES = 10_000;

/** `GET /v1/social/taxonomies/{name}`: the path. */
export const taxonomyParamsSchema = z.strictObject({
  name: z.enum(TAXONOMY_NAMES, { error: `expected one of ${TAXONOMY_NAMES.join(', ')}` }).meta({
    description:
      'The dictionary: `niches` and `countries` count accounts; `topics`, `languages` (a post’s primary language), `formats` and `offer_types` count posts.',
  }),
});

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/**
 * An ID's English label: a language's or country's name from the CLDR data Node carries
 * (`en` → "English", `US` → "United States"); a classification ID read as words
 * (`skin_barrier_repair` → "Skin barrier repair"), which is also what an unknown code falls back to.
 */
export function labelOf(kind: LabelKind, id: string): string {
  if (kind !== 'classification') {
    try {
      const name = (kind === 'language' ? languageNames : regionNames).of(id);
      if (name) return name;
    } catch {
      // Not a well-formed code: named as a classification ID below.
    }
  }
  const words = id.replace(/[_-]+/g, ' ').trim();
  return words === '' ? id : words.charAt(0).toUpperCase() + words.slice(1);
}
