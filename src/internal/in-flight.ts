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
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (next < items.length && failure === null) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
