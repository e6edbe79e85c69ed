import { setFlagsFromString } from 'node:v8';
import { nativeAddon } from './native.js';

// The bin loads this file alone, before the rest of olp: it also chooses the process starter here.
export { nativeAddon } from './native.js';

/**
 * V8's heap settings for a long-running daemon whose live heap is small (about 20 MB) but whose
 * allocation rate is high (every request is a few hundred short-lived objects). Left at V8's
 * defaults, the young generation grows to 16 MB per semi-space and the old generation to four
 * times its live size before a full collection, so the daemon sits at 120–170 MB under load
 * while holding 20. The settings below are read by V8 each time it resizes or collects (measured on Node 20
 * and 24: they take effect when set at run time, unlike `--max-semi-space-size`):
 *
 * - the young generation keeps its starting size (1 MB per semi-space): a collection of it costs
 *   what survives, and little survives a request, so the smaller space costs no CPU and keeps
 *   the hot objects in cache;
 * - a full collection runs once the old generation has grown by 30 % over what the last one
 *   left, instead of up to 300 %;
 * - the young generation is collected on the main thread alone: with 1 MB to collect, handing
 *   the work to helper threads and waiting for them costs more than it saves. Paired against
 *   parallel scavenges in the same window, with the start order swapped between two rounds:
 *   0.26 ms less CPU per sequential request (0.45 and 0.08 by round). One-round runs read
 *   0.22–0.30 (four), 0.06–0.45 with pre-start off (three) and −0.19 to +0.02 ms at
 *   concurrency 16, but lean about 0.2 ms towards the daemon started second.
 *
 * The first two must be set before the heap has grown: loading olp's modules alone takes the young
 * generation past its starting size (11 MB more at rest, measured), and it does not shrink back.
 * So the bin (main.ts) applies them for `olp serve` before it loads the rest of olp.
 *
 * Outside V8, glibc's malloc gives each thread that meets contention an arena of its own (up to 8
 * per core); memory freed in one arena is not reused by another, so the daemon's dozen threads
 * (libuv's pool, V8's helpers) hold more than they use. `MALLOC_ARENAS` of them are made at most
 * (through the native addon; arenas made before it loads stay). Measured under the bench's load
 * at concurrency 16: peak RSS 87.2–87.7 MB against 88.8–89.7 with glibc's default, CPU the same.
 *
 * `OLP_HEAP_TUNING=0` keeps V8's and glibc's defaults (for a comparison, or a host where memory is no object).
 */
export const HEAP_FLAGS = [
  '--semi-space-growth-factor=1',
  '--heap-growing-percent=30',
  '--no-parallel-scavenge',
] as const;
export const MALLOC_ARENAS = 2;

let tuned = false;
let arenas: number | null = null;

/** Applies `HEAP_FLAGS` unless the environment opts out; returns whether it did. */
export function tuneHeap(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OLP_HEAP_TUNING === '0') return false;
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
  if (nativeAddon(env).native?.limitArenas?.(MALLOC_ARENAS)) arenas = MALLOC_ARENAS;
  tuned = true;
  return true;
}

/**
 * The daemon's memory now, whether its heap runs on olp's settings, and the most malloc arenas
 * it makes (null: the C library's default). `/health` shows it.
 */
export function memoryInfo(): { rssMb: number; heapUsedMb: number; heapTuned: boolean; mallocArenas: number | null } {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 104857.6) / 10;
  return { rssMb: mb(m.rss), heapUsedMb: mb(m.heapUsed), heapTuned: tuned, mallocArenas: arenas };
}
