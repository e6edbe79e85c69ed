import type { GroupBy } from './usage-query.js';
import type { LedgerRecord } from './usage-row.js';

// The group of an exported row for `olp usage --by`, so that a roll-up of several ledgers groups rows
// exactly as `summarizeUsage` groups the table's. Each case mirrors usage-query.ts's GROUP_BY.

/** A row's group as `summarizeUsage` computes it (its GROUP_BY expressions). */
export function usageGroupOf(row: LedgerRecord, by: GroupBy): string {
  switch (by) {
    case 'key':
      return row.key_name ?? '(no key)';
    case 'day':
      // strftime('%Y-%m-%d', ts / 1000, 'unixepoch'): the UTC day of the arrival time.
      return row.time.slice(0, 10);
    case 'model':
      return row.served_model ?? row.requested_model ?? '(none)';
    case 'login':
      // Rows written before logins existed were all served by the machine's own.
      return row.backend === null ? '(no CLI)' : (row.login ?? 'machine');
  }
}
