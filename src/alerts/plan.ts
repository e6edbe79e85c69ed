// The alerts of a login's plan window: each threshold the CLI's last report of it has reached.
import { windowName } from '../plan/index.js';
import type { PlanRow } from '../store/index.js';
import { iso, reachedThresholds, round2, whenText } from './thresholds.js';
import type { PendingAlert } from './types.js';

/** How long a plan window whose reset the CLI did not say counts as one period. */
const UNKNOWN_RESET_MS = 3600_000;

/** The plan alerts a login's window has reached, from the CLI's last report (`scope`: `claude`, `claude@alice`). */
export function toPlanAlerts(scope: string, row: PlanRow, thresholds: readonly number[], now: number): PendingAlert[] {
  const spent = row.status === 'rejected';
  // A spent window is at its limit whatever share was last said; a report without one says nothing.
  const share = spent ? Math.max(1, row.utilization ?? 1) : row.utilization;
  if (share === null) return [];
  const at = scope.indexOf('@');
  const cli = at < 0 ? scope : scope.slice(0, at);
  const login = at < 0 ? null : scope.slice(at + 1);
  const end = row.resetsAt ?? now + UNKNOWN_RESET_MS;
  return reachedThresholds(share, thresholds).map((threshold) => ({
    id: `plan ${scope} ${row.window ?? '-'} ${threshold}`,
    periodEnd: end,
    alert: {
      type: 'olp.alert',
      kind: 'plan',
      subject: { login, cli },
      threshold,
      used: Math.round(share * 100),
      limit: 100,
      share: round2(share),
      period: {
        name: 'window',
        start: null,
        resets_at: row.resetsAt === null ? null : iso(row.resetsAt),
        window: row.window,
      },
      message: planMessage(cli, login, row, share, spent, now),
      at: iso(now),
    },
  }));
}

/** "claude (login alice) has used 92 % of the 5-hour window; it resets at 16:19 UTC". */
function planMessage(cli: string, login: string | null, row: PlanRow, share: number, spent: boolean, now: number) {
  const who = login === null ? `${cli} (the machine's login)` : `${cli} (login ${login})`;
  const head = spent
    ? `${who} has spent ${windowName(row.window)}${row.overage ? '; turns now draw on paid extra usage' : ''}`
    : `${who} has used ${Math.floor(share * 100)} % of ${windowName(row.window)}`;
  return row.resetsAt === null ? head : `${head}; it resets ${whenText(row.resetsAt, now)}`;
}
