// The time bounds of a usage query as people write them: one reading for `olp usage` and the HTTP export.

/** The forms a time bound may take, for error messages. */
export const WHEN_FORMS = 'a date (2026-12-01), an ISO time or a duration like 7d';

/**
 * `2026-12-01` (UTC midnight), a full ISO time, or a duration back from now (`7d`, `12h`, `30m`), as
 * ms since the epoch; a RangeError naming the value otherwise.
 */
export function parseWhen(raw: string, now = Date.now()): number {
  const rel = /^(\d+)([dhm])$/.exec(raw);
  if (rel) return now - Number(rel[1]) * { d: 86400_000, h: 3600_000, m: 60_000 }[rel[2] as 'd' | 'h' | 'm'];
  const t = Date.parse(/^\d{4}-\d\d-\d\d$/.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (Number.isNaN(t)) throw new RangeError(`must be ${WHEN_FORMS}, not '${raw}'`);
  return t;
}
