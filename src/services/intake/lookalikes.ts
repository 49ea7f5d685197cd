import { LRUCache } from 'lru-cache';
import {
  LOOKALIKE_POSTS,
  LOOKALIKE_WEIGHTS,
  lookalikeVector,
  topicText,
  type PostVector,
} from '../../domain/lookalike.ts';
import type { AccountRecord, StoredLookalike } from '../../domain/records.ts';
import type { IntakeStore } from '../../engine/intake-store.ts';
import { decodeVector, encodeVector } from '../../text/vector-codec.ts';

/** Keeps accounts' lookalike vectors current (domain/lookalike.ts). */
export interface Lookalikes {
  /**
   * Recomputes the lookalike vectors of `accountIds` from their newest posts' vectors and their
   * own text's vector, and stores those that changed; returns how many it stored. Call after the
   * vectors it reads were written (the posts are refreshed first).
   */
  update(accountIds: readonly string[]): Promise<number>;
  /** The same accounts with a current lookalike vector (no store write: index rebuilds). */
  withLookalikes(accounts: AccountRecord[]): Promise<AccountRecord[]>;
}

/**
 * Topic vectors kept per worker: the topics are a classification's IDs, a vocabulary of hundreds,
 * each a few words for the model once.
 */
const TOPIC_VECTORS = 2000;

/** Creates the lookalike updater of the worker for vectors of `modelId`. */
export function createLookalikes(deps: {
  store: Pick<IntakeStore, 'accounts' | 'recentPostVectors' | 'refresh'>;
  modelId: string;
  /** The model's vectors of topic IDs read as words (domain/lookalike.ts, topicText), in order. */
  embedTopics: (texts: string[]) => Promise<ArrayLike<number>[]>;
}): Lookalikes {
  const topicCache = new LRUCache<string, ArrayLike<number>>({ max: TOPIC_VECTORS });

  /** The vectors of the topics `posts` carry, from the cache or the model. */
  async function topicVectors(posts: Iterable<PostVector[]>): Promise<Map<string, ArrayLike<number>>> {
    const topics = new Set<string>();
    for (const list of posts) for (const post of list) for (const topic of post.topics ?? []) topics.add(topic);
    const missing = [...topics].filter((t) => !topicCache.has(t));
    if (missing.length > 0) {
      const vectors = await deps.embedTopics(missing.map(topicText));
      missing.forEach((topic, i) => topicCache.set(topic, vectors[i]));
    }
    return new Map([...topics].flatMap((t) => (topicCache.has(t) ? [[t, topicCache.get(t)!] as const] : [])));
  }

  /** Each account's lookalike vector from what the engine holds now (null: nothing to make it of). */
  async function compute(accounts: readonly AccountRecord[]): Promise<Map<string, StoredLookalike | null>> {
    const posts = await deps.store.recentPostVectors(
      accounts.map((a) => a.id),
      deps.modelId,
      LOOKALIKE_POSTS,
    );
    const topics = await topicVectors(posts.values());
    return new Map(
      accounts.map((account) => {
        // An account text the model cannot read has an empty vector: nothing of its own.
        const own =
          account.embedding?.model === deps.modelId && account.embedding.vector
            ? decodeVector(account.embedding.vector)
            : null;
        const published = posts.get(account.id) ?? [];
        const vector = lookalikeVector(published, own, LOOKALIKE_WEIGHTS, topics);
        return [
          account.id,
          vector ? { model: deps.modelId, posts: published.length, vector: encodeVector(vector) } : null,
        ];
      }),
    );
  }

  return {
    async update(accountIds) {
      const ids = [...new Set(accountIds)];
      if (ids.length === 0) return 0;
      await deps.store.refresh();
      const computed = await compute([...(await deps.store.accounts.get(ids)).values()]);
      const outcome = await deps.store.accounts.merge([...computed.keys()], (id, record) => {
        const lookalike = computed.get(id);
        if (!record || !lookalike) return record;
        return { ...record, lookalike };
      });
      return outcome.size;
    },

    async withLookalikes(accounts) {
      if (accounts.length === 0) return accounts;
      const computed = await compute(accounts);
      return accounts.map((account) => {
        const lookalike = computed.get(account.id);
        return lookalike ? { ...account, lookalike } : account;
      });
    },
  };
}
