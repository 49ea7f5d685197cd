/**
 * Long synchronous loops cut into slices: after `sliceMs` of work the loop lets the event loop
 * run (a `setImmediate` turn), so that the requests, Redis replies and timers queued behind it
 * are served in between.
 *
 * @param sliceStart when the current slice began (`performance.now()`)
 * @returns the start of the current slice: `sliceStart` itself, or now after a yield
 */
export async function yieldAfter(sliceStart: number, sliceMs: number): Promise<number> {
  if (performance.now() - sliceStart < sliceMs) return sliceStart;
  await new Promise<void>((resolve) => setImmediate(resolve));
  return performance.now();
}
