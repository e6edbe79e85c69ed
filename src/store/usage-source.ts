import { type UsageFilter, where } from './usage-where.js';
import {
  ERRORS_COLUMNS,
  errorsSelect,
  SESSIONS_COLUMNS,
  sessionsSelect,
  TOTALS_COLUMNS,
  totalsSelect,
} from './usage-rollup.js';

// The rows of a running-totals table (usage-rollup.ts) that a filter covers: the table's rows of the
// whole UTC days within it, and the same groups computed from the ledger's own rows of the part
// of a day at either end of it (a `--since 12h`), so the answer is the one a scan would give.

const DAY = 86_400_000;
/** 0000-01-01 and 9999-12-31: a bound outside them is read from the rows (no real time is that far out). */
const FIRST = -62_167_219_200_000;
const LAST = 253_402_214_400_000;

const TABLES = {
  totals: { name: 'usage_totals', columns: TOTALS_COLUMNS, select: totalsSelect },
  errors: { name: 'usage_errors', columns: ERRORS_COLUMNS, select: errorsSelect },
  sessions: { name: 'usage_sessions', columns: SESSIONS_COLUMNS, select: sessionsSelect },
} as const;

export type Totals = keyof typeof TABLES;

const floorDay = (ms: number) => ms - (((ms % DAY) + DAY) % DAY);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** One part of a filter's totals: the table's rows of whole days, or the groups of the ledger's own rows. */
export interface TotalsPart {
  /** The table's rows (`FROM table WHERE …`) or the SELECT over the ledger's rows. */
  sql: string;
  params: unknown[];
  /** The table's WHERE (with `params`), for a part read from the table. */
  tableWhere?: string;
}

/**
 * The parts of the table `which` that add up to its groups over the filter's rows; `also` narrows
 * every part by a condition on the columns both have (its parameters last), read from the table
 * through its `index`.
 */
export function partsOf(
  which: Totals,
  f: UsageFilter,
  also?: { sql: string; params: unknown[]; index?: string },
): TotalsPart[] {
  const t = TABLES[which];
  const { sinceMs: since, untilMs: until, ...keys } = f;
  const extra = also ? [also.sql] : [];
  const parts: TotalsPart[] = [];
  const raw = (from: number | undefined, to: number | undefined) => {
    const w = where(
      { ...keys, ...(from === undefined ? {} : { sinceMs: from }), ...(to === undefined ? {} : { untilMs: to }) },
      ...extra,
    );
    parts.push({ sql: t.select(w.sql), params: [...w.params, ...(also?.params ?? [])] });
  };
  // The whole days within [since, until), and the ledger's rows of what is left at either end.
  const first = since === undefined ? undefined : floorDay(since) === since ? since : floorDay(since) + DAY;
  const end = until === undefined ? undefined : floorDay(until);
  const outside = [since, until].some((x) => x !== undefined && !(x >= FIRST && x < LAST));
  if (outside || (first !== undefined && end !== undefined && first >= end)) {
    raw(since, until);
  } else {
    const days = [...(first === undefined ? [] : ['day >= ?']), ...(end === undefined ? [] : ['day < ?'])];
    const w = where(keys, ...days, ...extra);
    const params = [
      ...w.params,
      ...(first === undefined ? [] : [dayOf(first)]),
      ...(end === undefined ? [] : [dayOf(end)]),
      ...(also?.params ?? []),
    ];
    const from = also?.index ? `${t.name} INDEXED BY ${also.index}` : t.name;
    parts.push({ sql: `SELECT ${t.columns} FROM ${from} ${w.sql}`, params, tableWhere: w.sql });
    if (since !== undefined && since < first!) raw(since, first);
    if (until !== undefined && until > end!) raw(end, until);
  }
  return parts;
}

/**
 * A subquery with the columns of the table `which`, whose rows add up to the table's groups over the
 * filter's rows.
 */
export function totalsOf(which: Totals, f: UsageFilter): { sql: string; params: unknown[] } {
  const parts = partsOf(which, f);
  return { sql: parts.map((p) => p.sql).join(' UNION ALL '), params: parts.flatMap((p) => p.params) };
}
