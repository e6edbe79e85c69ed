// SQLite's sum() of REAL values: a compensated (Kahan-Babuska-Neumaier) sum since 3.43.

/** A compensated sum under way: the running sum and its error term. */
export interface CompensatedSum {
  sum: number;
  err: number;
}

/** One step of SQLite's compensated sum (kahanBabuskaNeumaierStep in func.c). */
export function addCompensated(acc: CompensatedSum, x: number): void {
  const t = acc.sum + x;
  acc.err += Math.abs(acc.sum) > Math.abs(x) ? acc.sum - t + x : x - t + acc.sum;
  acc.sum = t;
}

/** What sum() returns at the end: the sum with its error term added, unless that overflowed. */
export function compensatedTotal(acc: CompensatedSum): number {
  return Number.isFinite(acc.err) ? acc.sum + acc.err : acc.sum;
}
