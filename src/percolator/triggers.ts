/**
 * What a document must carry for a query to match it, so that of many queries each is tried only
 * on the documents that carry one of its necessary keys (percolate.ts): a text token is its own
 * key (no token starts with a control character); a keyword value is keyed by its field
 * ({@link keywordKey}).
 *
 * `keys` (any one of them), `all` (each child is necessary, so any one child alone is a sound
 * test), `any` (one child or another: their union). `null`: nothing is necessary (a range, a
 * negation, match-all).
 */
export type Trigger = { keys: string[] } | { all: Trigger[] } | { any: Trigger[] } | null;

/** The key of a keyword field's normalized value. */
export const keywordKey = (path: string, value: string) => `\u0000${path}\u0000${value}`;

/** The keyword fields a trigger names (documents offer their values as keys only for these). */
export function triggerPaths(trigger: Trigger, out = new Set<string>()): Set<string> {
  if (trigger === null) return out;
  if ('keys' in trigger) {
    for (const key of trigger.keys) if (key.startsWith('\u0000')) out.add(key.slice(1, key.indexOf('\u0000', 1)));
  } else for (const child of 'all' in trigger ? trigger.all : trigger.any) triggerPaths(child, out);
  return out;
}

/**
 * The keys to look a query up by in one batch: of the alternatives its trigger offers, the one
 * carried by the fewest documents of the batch (`count`), so that a query is tried on as few
 * documents as its necessary conditions allow. Null: try it on every document.
 */
export function chooseKeys(trigger: Trigger, count: (key: string) => number): { keys: string[]; cost: number } | null {
  if (trigger === null) return null;
  if ('keys' in trigger) return { keys: trigger.keys, cost: trigger.keys.reduce((sum, k) => sum + count(k), 0) };
  if ('all' in trigger) {
    let best: { keys: string[]; cost: number } | null = null;
    for (const child of trigger.all) {
      const chosen = chooseKeys(child, count);
      if (chosen && (!best || chosen.cost < best.cost)) best = chosen;
    }
    return best;
  }
  const parts: string[] = [];
  let cost = 0;
  for (const child of trigger.any) {
    const chosen = chooseKeys(child, count);
    if (!chosen) return null;
    parts.push(...chosen.keys);
    cost += chosen.cost;
  }
  return { keys: parts, cost };
}
