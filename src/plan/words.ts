import { planLimitReached, type ProxyError } from '../errors/index.js';
import type { PlanRow } from '../store/index.js';

// A plan's state in words: its windows' names, the answer while one is spent, a CLI's reset time.

const WINDOW_NAMES: Record<string, string> = {
  five_hour: '5-hour',
  seven_day: 'weekly',
  seven_day_opus: 'weekly Opus',
  seven_day_sonnet: 'weekly Sonnet',
  overage: 'extra usage',
};

/** "the 5-hour window", "the weekly window", or "the plan's window". */
export function windowName(window: string | null): string {
  return window ? `the ${WINDOW_NAMES[window] ?? window.replace(/_/g, ' ')} window` : "the plan's window";
}

/** A plan scope (`claude`, `claude@alice`) as a message says it: "claude", "claude (login alice)". */
export function scopeName(scope: string): string {
  const at = scope.indexOf('@');
  return at < 0 ? scope : `${scope.slice(0, at)} (login ${scope.slice(at + 1)})`;
}

/** The answer to a request while the scope's plan window is spent (`said`: the CLI's words). */
export function windowSpent(
  scope: string,
  window: string | null,
  resetsAt: number | null,
  said: string | null | undefined,
  now: number,
): ProxyError {
  const at = resetsAt === null ? '' : ` It resets at ${new Date(resetsAt).toISOString()}.`;
  const backend = scope.split('@')[0];
  return planLimitReached(
    `The ${scopeName(scope)} login's plan limit is reached: ${windowName(window)} is spent.${at}` +
      (said ? ` (${backend}: "${said}")` : ''),
    resetsAt,
    now,
  );
}

/** One line per backend whose plan state is still current, for `olp doctor` and `olp usage`. */
export function describePlans(rows: readonly PlanRow[], now: number): string[] {
  return rows
    .filter((r) => r.resetsAt === null || r.resetsAt > now)
    .map((r) => {
      const used = r.utilization === null ? '' : `, ${Math.round(r.utilization * 100)} % used`;
      const reset = r.resetsAt === null ? '' : `, resets ${new Date(r.resetsAt).toISOString()}`;
      const extra = r.overage ? ', drawing on paid extra usage' : '';
      const reported = `; reported ${new Date(r.updatedAt).toISOString()}`;
      return `${scopeName(r.backend)}: ${r.status} (${windowName(r.window)}${used}${reset}${extra}${reported})`;
    });
}

/**
 * A CLI's words for a spent usage limit (claude's "You've hit your … limit", codex's "You’ve hit your usage
 * limit").
 */
export const LIMIT_TEXT = /you[’']ve hit your .{0,40}limit/i;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * The reset time in a CLI's words: "resets 4:19pm (UTC)", "resets Dec 6, 7:28am (UTC)" (claude,
 * in its time zone, which it names), "try again at 8:30 AM", "try again at Dec 5th, 2026 3:04 PM"
 * (codex, in local time, unnamed: olp's own, as it runs on the same machine). The next such time
 * after `now`; undefined when the text has none or names another zone.
 */
/**
 * "resets" or "try again at", then an optional date ([1] month, [2] day, [3] year), then the time ([4] hour,
 * [5] minute, [6] a or p) and an optional zone in brackets ([7]).
 */
const RESET_AT = new RegExp(
  [
    /(?:resets|try again at)\s+/,
    /(?:([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?)?/,
    /(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?/,
    /(?:\s*\(([^)]+)\))?/,
  ]
    .map((r) => r.source)
    .join(''),
  'i',
);

export function resetFromText(text: string, now: number): number | undefined {
  // "try again in 2 hours" (older codex builds).
  const rel = /try again in (\d+) (minute|hour|day)s?\b/i.exec(text);
  if (rel)
    return (
      now +
      Number(rel[1]) *
        { minute: 60_000, hour: 3600_000, day: 86_400_000 }[rel[2]!.toLowerCase() as 'minute' | 'hour' | 'day']
    );
  const m = RESET_AT.exec(text);
  if (!m) return undefined;
  const zone = m[7]?.trim();
  if (zone && !/^(utc|gmt|etc\/utc)$/i.test(zone)) return undefined;
  const utc = zone !== undefined;
  let hour = Number(m[4]) % 12;
  if (m[6]!.toLowerCase() === 'p') hour += 12;
  const minute = Number(m[5] ?? 0);
  const d = new Date(now);
  const year = m[3] ? Number(m[3]) : utc ? d.getUTCFullYear() : d.getFullYear();
  const month = m[1] ? MONTHS.indexOf(m[1].toLowerCase()) : utc ? d.getUTCMonth() : d.getMonth();
  if (month < 0) return undefined;
  const day = m[2] ? Number(m[2]) : utc ? d.getUTCDate() : d.getDate();
  const at = utc ? Date.UTC(year, month, day, hour, minute) : new Date(year, month, day, hour, minute).getTime();
  if (at > now) return at;
  // A time of day alone is the next one (local: by the calendar, right across a DST change); a
  // date without a year, next year's.
  if (!m[1]) return utc ? at + 86_400_000 : new Date(year, month, day + 1, hour, minute).getTime();
  if (!m[3])
    return utc ? Date.UTC(year + 1, month, day, hour, minute) : new Date(year + 1, month, day, hour, minute).getTime();
  return undefined;
}
