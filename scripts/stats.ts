// Percentiles by hdr-histogram-js (the histogram autocannon uses), in milliseconds.
import hdr from 'hdr-histogram-js';

export interface Timings {
  record(ms: number): void;
  readonly count: number;
  /** The value at a percentile, in ms (microsecond resolution). */
  p(percentile: number): number;
}

export function createTimings(): Timings {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  let count = 0;
  return {
    record(ms: number) {
      h.recordValue(Math.max(1, Math.round(ms * 1000)));
      count++;
    },
    get count() {
      return count;
    },
    p: (percentile: number) => (count === 0 ? NaN : h.getValueAtPercentile(percentile) / 1000),
  };
}

/** Requests per second doing `n` calls of `fn`, `c` at a time. */
export async function throughput(n: number, c: number, fn: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        await fn();
      }
    }),
  );
  return n / ((performance.now() - started) / 1000);
}
