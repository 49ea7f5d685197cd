/**
 * What "an account like this one" compares: a vector of what the account publishes, its recent
 * posts' vectors weighted by recency, with a share of its own text's vector (biography and
 * publishing summary) and a share of its posts' topics (the enrichment's classification IDs, each
 * read by the model as words: the same in every language). Pure vector arithmetic; the weights are
 * measured on the judged lookalike set (bench/relevance.md, "Lookalikes").
 */

/** How many of an account's most recent posts with vectors make its lookalike vector. */
export const LOOKALIKE_POSTS = 30;
/** A post's weight halves every this many days it is older than the account's newest post. */
export const LOOKALIKE_HALF_LIFE_DAYS = 90;
/** The account's own text's share of the vector (the posts take the rest). */
export const LOOKALIKE_TEXT_SHARE = 0.2;
/**
 * The share of the posts' topics in the vector, when the account's posts carry topics. The model
 * reads posts in other languages poorly, and groups them by language rather than by subject; a
 * topic is a classification ID, the same whatever the language of the post.
 */
export const LOOKALIKE_TOPIC_SHARE = 0.5;

/** The weights of a lookalike vector; the service uses {@link LOOKALIKE_WEIGHTS}. */
export interface LookalikeWeights {
  /** How many of the most recent posts count. */
  posts: number;
  /** Half-life of a post's weight in days (Infinity: no recency weighting). */
  halfLifeDays: number;
  /** The account's own text's share. */
  textShare: number;
  /** The share of the posts' topics (0: none). */
  topicShare: number;
}

/** The service's weights. */
export const LOOKALIKE_WEIGHTS: LookalikeWeights = {
  posts: LOOKALIKE_POSTS,
  halfLifeDays: LOOKALIKE_HALF_LIFE_DAYS,
  textShare: LOOKALIKE_TEXT_SHARE,
  topicShare: LOOKALIKE_TOPIC_SHARE,
};

/** One post's vector, when it was posted, and its topics (none while it awaits enrichment). */
export interface PostVector {
  postedAt: string;
  vector: ArrayLike<number>;
  topics?: readonly string[];
}

/** A topic ID as the model reads it: `night_skincare_routine` → `night skincare routine`. */
export function topicText(topic: string): string {
  return topic.replace(/[_-]+/g, ' ').trim();
}

const DAY_MS = 24 * 60 * 60 * 1000;

function norm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  return Math.sqrt(sum);
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
function unit(vector: ArrayLike<number>): Float64Array {
  const n = norm(vector);
  const out = new Float64Array(vector.length);
  if (n > 0) for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / n;
  return out;
}

/**
 * The lookalike vector of an account (unit length), or null when it has neither posts with
 * vectors nor a text vector. Posts: the `weights.posts` most recent, each unit vector weighted by
 * recency; text: `weights.textShare` of the result when there are posts, all of it when there are
 * none. The benchmark passes other weights to compare them.
 */
export function lookalikeVector(
  posts: readonly PostVector[],
  text: ArrayLike<number> | null,
  weights: LookalikeWeights = LOOKALIKE_WEIGHTS,
  topicVectors: ReadonlyMap<string, ArrayLike<number>> = new Map(),
): number[] | null {
  const recent = [...posts].sort((a, b) => Date.parse(b.postedAt) - Date.parse(a.postedAt)).slice(0, weights.posts);
  if (recent.length === 0) return text && norm(text) > 0 ? Array.from(unit(text)) : null;
  const newest = Date.parse(recent[0]!.postedAt);
  const dims = recent[0]!.vector.length;
  const published = new Float64Array(dims);
  const topics = new Float64Array(dims);
  for (const post of recent) {
    const weight = 0.5 ** ((newest - Date.parse(post.postedAt)) / DAY_MS / weights.halfLifeDays);
    const v = unit(post.vector);
    for (let i = 0; i < dims; i++) published[i] = published[i]! + weight * v[i]!;
    // A post's topics share its weight.
    const known = (post.topics ?? []).map((t) => topicVectors.get(t)).filter((t) => t && t.length === dims);
    for (const t of known) {
      const u = unit(t!);
      for (let i = 0; i < dims; i++) topics[i] = topics[i]! + (weight / known.length) * u[i]!;
    }
  }
  const mixed = unit(published);
  if (text && text.length === dims && norm(text) > 0) {
    const t = unit(text);
    for (let i = 0; i < dims; i++) mixed[i] = (1 - weights.textShare) * mixed[i]! + weights.textShare * t[i]!;
  }
  if (weights.topicShare > 0 && norm(topics) > 0) {
    const meaning = unit(mixed);
    const subject = unit(topics);
    for (let i = 0; i < dims; i++) mixed[i] = (1 - weights.topicShare) * meaning[i]! + weights.topicShare * subject[i]!;
  }
  return Array.from(unit(mixed));
}

/** Cosine similarity of two vectors (0 when either is zero). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) dot += a[i]! * b[i]!;
  const n = norm(a) * norm(b);
  return n > 0 ? dot / n : 0;
}
