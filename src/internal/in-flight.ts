/**
 * Runs `work` on every item, at most `limit` at once, starting them in order. After a failure no
 * further item starts; once the running ones have settled, the first failure is thrown (so no
 * work is left running behind a caller that has already seen the error).
 */
export async function eachInFlight<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < items.length && failures.length === 0) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        if (failures.length === 0) failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  if (failures.length > 0) throw failures[0];
}
