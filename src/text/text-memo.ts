/**
 * A memo keyed by text, bounded by the characters it holds, that keeps the recently used entries.
 *
 * Why: the intake projects a post several times within seconds (its first write, a later
 * enrichment, the fan-out and baseline follow-ups), and language detection and analysis of the
 * same caption and summary were most of the worker's CPU. Two generations approximate LRU
 * without per-entry bookkeeping: entries go into the current generation; when it is full, it
 * becomes the previous one (the older one is dropped), and a hit in the previous generation moves
 * the entry forward. So at most `2 × maxChars` characters (and `2 × maxEntries` entries) are held,
 * and whatever was used within the last generation survives.
 */
export interface TextMemo<V> {
  /**
   * The value for `key`, computed by `compute` on a miss. With `keep` false, a miss is not stored
   * and a hit not moved forward: a reader that would only push out what others reuse.
   */
  get(key: string, compute: (key: string) => V, keep?: boolean): V;
}

/**
 * @param maxChars characters of keys (plus `weight(value)`) per generation.
 * @param weight the size of a value in characters, when values are text too.
 * @param maxEntries entries per generation: for short keys, the map's own overhead is what counts.
 */
export function textMemo<V>(
  maxChars: number,
  weight: (value: V) => number = () => 0,
  maxEntries = Infinity,
): TextMemo<V> {
  let current = new Map<string, V>();
  let previous = new Map<string, V>();
  let chars = 0;

  function put(key: string, value: V): void {
    const size = key.length + weight(value);
    if ((chars + size > maxChars || current.size >= maxEntries) && current.size > 0) {
      previous = current;
      current = new Map();
      chars = 0;
    }
    current.set(key, value);
    chars += size;
  }

  return {
    get(key, compute, keep = true) {
      const hit = current.get(key);
      if (hit !== undefined) return hit;
      const older = previous.get(key);
      if (older !== undefined) {
        if (!keep) return older;
        previous.delete(key);
        put(key, older);
        return older;
      }
      const value = compute(key);
      if (keep) put(key, value);
      return value;
    },
  };
}
