// Waiting on something a test expects to happen (a worker up, a process gone, a log line), by
// looking again every few ms. The bound is the test's patience on a busy machine (a 2-core one
// at a load of 20 takes many times as long), never a claim about olp's speed: those are the
// benchmarks under scripts/. A wait that runs out fails the test, saying what it waited for.

/** The default patience: a minute. */
export const PATIENCE_MS = 60_000;

/** Resolves once `cond` holds; throws after `ms` without it. */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  ms = PATIENCE_MS,
  what = 'the condition',
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
