/**
 * A run's idle timer: it measures time without progress and runs only while olp waits for
 * output, never while olp itself holds the CLI back (its consumer has not asked for the next
 * line yet). `off()` says when nothing is expected (the leader exited, or a live run between turns).
 */
export function createIdleTimer(idleTimeoutMs: number, onIdle: () => void, off: () => boolean) {
  let idleTimer: NodeJS.Timeout | undefined;
  let idleDeadline = performance.now() + idleTimeoutMs;
  let pausedAt: number | undefined;
  let waiting = false;
  const arm = () => {
    if (off()) return;
    if (pausedAt !== undefined) idleDeadline += performance.now() - pausedAt;
    pausedAt = undefined;
    waiting = true;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(onIdle, Math.max(0, idleDeadline - performance.now()));
  };
  const pause = () => {
    waiting = false;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    pausedAt ??= performance.now();
  };
  const progress = () => {
    idleDeadline = performance.now() + idleTimeoutMs;
    if (pausedAt !== undefined) pausedAt = performance.now();
    if (waiting) arm();
  };
  return { arm, pause, progress };
}
