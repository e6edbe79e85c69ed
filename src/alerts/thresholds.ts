// What both kinds of alert share: the thresholds a share has reached, and the words and numbers
// of their times and shares.

/** The thresholds (percents, ascending) that a share (0–1 and beyond) has reached. */
export function reachedThresholds(share: number, thresholds: readonly number[]): number[] {
  // Rounded to a hundredth of a percent: 0.8 * 100 is 80.00000000000001 in floating point.
  const percent = Math.round(share * 10_000) / 100;
  return thresholds.filter((t) => percent >= t);
}

/** "at 16:19 UTC" within a day, else "on 2027-01-01 at 00:00 UTC". */
export function whenText(t: number, now: number): string {
  const s = iso(t);
  const clock = `at ${s.slice(11, 16)} UTC`;
  return t - now < 24 * 3600_000 ? clock : `on ${s.slice(0, 10)} ${clock}`;
}

export const iso = (t: number) => new Date(t).toISOString();
export const round2 = (x: number) => Math.round(x * 100) / 100;
