/**
 * A node's share of its engine work between subjects (API keys): at most `running` operations of
 * one subject at once, the next `waiting` queued in arrival order, any more refused.
 */
export interface FairShare {
  /** Runs `operation` in `id`'s share: at once, after the subject's earlier ones, or not at all (`refuse`). */
  run<T>(id: string, operation: () => Promise<T>): Promise<T>;
}

/** One subject's operations on this node. */
interface Share {
  running: number;
  /** Operations waiting for one of the subject's slots, oldest first: each resumes when handed a slot. */
  queue: Array<() => void>;
}

/**
 * Creates the share. Why (bench/search.md, "One key's burst and another's search"): the engine
 * answers searches in arrival order, so a key with 32 searches in flight (within its budget per
 * minute) put another key's one search behind all of them: p50 16 → 243 ms (83–115 ms with a
 * share of 8, 34 with 4). Capped per key, the burst waits in its own queue here and the other
 * key's search goes straight to the engine. A subject alone still has `running` searches in the
 * engine at once; its next ones wait here, even on an idle node (the share is not
 * work-conserving: a page of more than `running` searches takes a second round).
 */
export function createFairShare(options: {
  running: number;
  waiting: number;
  refuse: () => Error;
  /** Awaited before a refusal (the node's refusal pause); absent: refused at once. */
  pause?: (id: string) => Promise<void>;
}): FairShare {
  const shares = new Map<string, Share>();
  return {
    async run(id, operation) {
      let share = shares.get(id);
      if (!share) shares.set(id, (share = { running: 0, queue: [] }));
      if (share.running < options.running) share.running++;
      else if (share.queue.length >= options.waiting) {
        await options.pause?.(id);
        throw options.refuse();
      }
      // Handed a slot by an operation that ends: the count of running ones stays as it is.
      else await new Promise<void>((resume) => share.queue.push(resume));
      try {
        return await operation();
      } finally {
        const next = share.queue.shift();
        if (next) next();
        else if (--share.running === 0) shares.delete(id);
      }
    },
  };
}
