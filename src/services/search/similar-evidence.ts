import type { AccountMatch, PostMatch } from '../../contract/search-extras.ts';
import { linksOf } from '../../domain/links.ts';
import type { AccountRecord, PostRecord, SearchedPost } from '../../domain/records.ts';
import type { SimilarityEvidence } from '../../engine/matches.ts';
import type { Reference } from './references.ts';

/** Posts of a result shown as closest to the reference, at most. */
const CLOSEST_POSTS = 3;

/** The members of `a` also in `b`, in `a`'s order, compared case-insensitively, without repeats. */
function shared(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): string[] {
  const other = new Set((b ?? []).map((x) => x.toLowerCase()));
  const seen = new Set<string>();
  return (a ?? []).filter((x) => {
    const key = x.toLowerCase();
    if (!other.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The author's niches a post carries in its snapshot of the author. */
function authorNiches(post: SearchedPost): string[] {
  const author = linksOf(post).author;
  return (author ? post.accounts[author]?.niches : null) ?? [];
}

function languagesOf(post: SearchedPost): string[] {
  const language = post.enrichment.primary_language?.v;
  return language ? [language] : [];
}

/**
 * A cosine similarity as shown: four decimals. The engine's score is float32 arithmetic, so more
 * digits are noise (0.6241045000000001), and they would make equal evidence differ in bytes.
 */
export function shownSimilarity(value: number): number {
  return Math.round(value * 1e4) / 1e4;
}

/**
 * Why results of `similar_to` searches are alike their reference (`"include": ["matches"]`), the
 * reference as the page resolved it.
 */
export interface SimilarEvidence {
  posts(
    reference: Reference<PostRecord>,
    results: readonly SearchedPost[],
    similarity: ReadonlyMap<string, number>,
  ): PostMatch[];
  accounts(
    reference: Reference<AccountRecord>,
    results: readonly AccountRecord[],
    similarity: ReadonlyMap<string, number>,
  ): Promise<AccountMatch[]>;
}

/** Creates the evidence of `similar_to` searches. */
export function createSimilarEvidence(deps: { engine: SimilarityEvidence }): SimilarEvidence {
  return {
    posts({ record: reference }, results, similarity) {
      return results.map((post) => ({
        id: post.id,
        retrieved_by: 'semantic',
        fields: [],
        similar: {
          similarity: shownSimilarity(similarity.get(post.id) ?? 0),
          shared: {
            topics: shared(post.enrichment.topics?.v, reference.enrichment.topics?.v),
            hashtags: shared(post.raw?.v.hashtags, reference.raw?.v.hashtags),
            languages: shared(languagesOf(post), languagesOf(reference)),
            author_niches: shared(authorNiches(post), authorNiches(reference)),
          },
        },
      }));
    },

    async accounts(reference, results, similarity) {
      const ids = results.map((a) => a.id);
      const [topics, closest] = await Promise.all([
        deps.engine.accountTopics([reference.record.id, ...ids]),
        deps.engine.closestPosts(ids, reference.vector, CLOSEST_POSTS),
      ]);
      const own = topics.get(reference.record.id);
      return results.map((account) => ({
        id: account.id,
        similarity: shownSimilarity(similarity.get(account.id) ?? 0),
        shared: {
          niches: shared(account.niches?.v, reference.record.niches?.v),
          topics: shared(topics.get(account.id), own),
          languages: shared(account.publishing_languages?.v, reference.record.publishing_languages?.v),
        },
        closest_posts: (closest.get(account.id) ?? []).map((p) => ({
          ...p,
          similarity: shownSimilarity(p.similarity),
        })),
      }));
    },
  };
}
