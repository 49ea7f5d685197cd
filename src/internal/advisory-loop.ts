/**
 * Runs `task` every `intervalMs` for a process's lifetime, never two at once (a tick while one
 * still runs is skipped) and its failures ignored: the loop behind an advisory signal a process
 * samples (write pacing, the backlog refresh). The timer does not hold the process open. Returns
 * the function that stops it.
 */
export function everyInterval(intervalMs: number, task: () => Promise<unknown>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
