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

/**
 * A lane for sliced work: one piece runs at a time, in the order asked. Sliced work run side by
 * side still holds the event loop for one slice each between two turns (their `setImmediate`
 * continuations all run in the same phase); in one lane, a turn waits for one slice at most.
 */
export function createLane(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}
