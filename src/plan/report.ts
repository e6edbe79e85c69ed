// What a plan report is worth a warning in the log for: a window spent, paid extra usage begun, and a
// usage threshold crossed (once per window).
import type { Logger } from '../log/index.js';
import type { PlanRow } from '../store/index.js';
import type { PlanReport } from './types.js';
import { scopeName, windowName } from './words.js';

/** The thresholds whose crossing is logged, once per window. */
const WARN_AT = [0.8, 0.95];

/** A report just stored (`row`), against the state before it. */
interface Reported {
  backend: string;
  r: PlanReport;
  before: PlanRow | undefined;
  row: PlanRow;
}

/**
 * Logs what a report changed. `warned` holds `<backend> <window> <threshold>` already warned about,
 * until that window's reset.
 */
export function logReport(logger: Logger, warned: Map<string, number>, x: Reported, now: number): void {
  const { backend, r, before, row } = x;
  if (r.status === 'rejected' && !r.overage && (before?.status !== 'rejected' || before.overage)) {
    logger.warn(
      {
        event: 'plan_limit_reached',
        backend,
        window: r.window,
        resetsAt: row.resetsAt === null ? null : new Date(row.resetsAt).toISOString(),
      },
      `${scopeName(backend)}: ${windowName(r.window)} is spent`,
    );
  }
  if (r.overage && !before?.overage)
    logger.warn(
      { event: 'plan_overage', backend, window: r.window },
      `${scopeName(backend)}: the plan's included usage is spent; turns now draw on paid extra usage`,
    );
  const { utilization } = row;
  for (const t of WARN_AT) {
    const id = `${backend} ${r.window} ${t}`;
    if (utilization === null || utilization < t || (warned.get(id) ?? 0) > now) continue;
    warned.set(id, r.resetsAt ?? now + 3600_000);
    logger.warn(
      { event: 'plan_utilization', backend, window: r.window, utilization, threshold: t },
      `${scopeName(backend)}: ${Math.round(utilization * 100)} % of ${windowName(r.window)} is used`,
    );
  }
}
