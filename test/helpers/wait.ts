/** A value `until` accepts as done. */
export type Done<T> = Exclude<T, null | false | undefined | 0 | ''>;

/**
 * Polls `probe` until it answers a truthy value and returns that value; throws after `timeoutMs`,
 * naming `what` and the last answer, so a timed-out wait says what it saw.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Done<T>> {
  const { timeoutMs = 20_000, intervalMs = 100, what = 'the condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    // The probe's answer is truthy here, which is what Done<T> says.
    if (value) return value as Done<T>;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last answer: ${describe(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits as `until` does and answers how many milliseconds it took (drills report it). */
export async function timeUntil(
  what: string,
  probe: () => unknown,
  timeoutMs: number,
  intervalMs = 100,
): Promise<number> {
  const started = performance.now();
  await until(probe, { what, timeoutMs, intervalMs });
  return Math.round(performance.now() - started);
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
