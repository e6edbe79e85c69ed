import type { Database } from 'better-sqlite3';

/**
 * Which alerts were sent: a row per (kind, subject, period name, threshold) with the end of the
 * period it was sent in. Taking one is a single statement, so concurrent requests and a second
 * process on the same state dir agree on who sends it.
 */
export function createAlertStore(db: Database) {
  // A row whose period is over is taken again (a new day, a plan window reset); a live one is not.
  // Keyed without the period's own time: a window's reset, as some CLIs say it, drifts by seconds.
  const take = db.prepare(
    `INSERT INTO alerts_sent (id, period_end, sent_at) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET period_end = excluded.period_end, sent_at = excluded.sent_at
     WHERE alerts_sent.period_end <= excluded.sent_at`,
  );
  return {
    /** Records the alert `id` as sent in the period ending `periodEnd`; false when it already was. */
    claim(id: string, periodEnd: number, now: number): boolean {
      return take.run(id, periodEnd, now).changes === 1;
    },
  };
}

export type AlertStore = ReturnType<typeof createAlertStore>;
