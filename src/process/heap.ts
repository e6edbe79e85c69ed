import { setFlagsFromString } from 'node:v8';

/**
 * V8's heap settings for a long-running daemon whose live heap is small (about 20 MB) but whose
 * allocation rate is high (every request is a few hundred short-lived objects). Left at V8's
 * defaults, the young generation grows to 16 MB per semi-space and the old generation to four
 * times its live size before a full collection, so the daemon sits at 120–170 MB under load
 * while holding 20. Both settings below are read by V8 each time it resizes (measured on Node 20
 * and 24: they take effect when set at run time, unlike `--max-semi-space-size`):
 *
 * - the young generation keeps its starting size (1 MB per semi-space): a collection of it costs
 *   what survives, and little survives a request, so the smaller space costs no CPU and keeps
 *   the hot objects in cache;
 * - a full collection runs once the old generation has grown by 30 % over what the last one
 *   left, instead of up to 300 %.
 *
 * They must be set before the heap has grown: loading olp's modules alone takes the young
 * generation past its starting size (11 MB more at rest, measured), and it does not shrink back.
 * So the bin (main.ts) applies them for `olp serve` before it loads the rest of olp.
 *
 * `OLP_HEAP_TUNING=0` keeps V8's defaults (for a comparison, or a host where memory is no object).
 */
export const HEAP_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=30'] as const;

let tuned = false;

/** Applies `HEAP_FLAGS` unless the environment opts out; returns whether it did. */
export function tuneHeap(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OLP_HEAP_TUNING === '0') return false;
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
  tuned = true;
  return true;
}

/** The daemon's memory now, and whether its heap runs on olp's settings (`/health` shows it). */
export function memoryInfo(): { rssMb: number; heapUsedMb: number; heapTuned: boolean } {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 104857.6) / 10;
  return { rssMb: mb(m.rss), heapUsedMb: mb(m.heapUsed), heapTuned: tuned };
}
