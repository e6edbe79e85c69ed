import type { Database } from 'better-sqlite3';
import type { UsageFilter } from './usage-where.js';
import { partsOf } from './usage-source.js';

/**
 * One conversation as the ledger can honestly tell it: the successful rows that share one CLI
 * session id. olp resumes a key's CLI session exactly when a request's messages are that session's
 * history plus new turns (ARCHITECTURE, slots), and starts a fresh session for anything else, so
 * one session id is one conversation the member carried on; a conversation whose earlier messages
 * were edited continues under a new id and counts as a new one. A request answered while every
 * slot was busy (`ephemeral`) ran in a session of its own and counts as a one-turn conversation.
 * The slots themselves are not conversations: three slots are reused by any number of them.
 */
export interface ConversationSummary {
  backend: string | null;
  model: string;
  started_at: string;
  last_at: string;
  turns: number;
}

/**
 * The sessions among which the `limit` most recently continued ones are: every session of the part
 * days at the ends of the filter (few rows), and the first `limit` sessions of the whole days met
 * newest first (the running totals' index by key and last time), each at its latest.
 */
function candidates(db: Database, filter: UsageFilter, limit: number): string[] {
  const ids = new Set<string>();
  const byKey = 'keyId' in filter.scope || filter.keyId !== undefined;
  for (const p of partsOf('sessions', filter)) {
    if (p.tableWhere === undefined) {
      for (const r of db.prepare(`SELECT session_id FROM (${p.sql})`).all(...p.params) as { session_id: string }[])
        ids.add(r.session_id);
      continue;
    }
    const newest = db.prepare(
      `SELECT session_id, last_ts FROM usage_sessions ${byKey ? 'INDEXED BY usage_sessions_last' : ''} ${p.tableWhere}
       ORDER BY last_ts DESC`,
    );
    const found = new Set<string>();
    // Past the limit, the sessions tied with the last one taken (the order among them is the query's).
    let last: number | undefined;
    for (const r of newest.iterate(...p.params) as IterableIterator<{ session_id: string; last_ts: number }>) {
      if (last !== undefined && r.last_ts < last) break;
      found.add(r.session_id);
      if (found.size >= limit) last = r.last_ts;
    }
    for (const id of found) ids.add(id);
  }
  return [...ids];
}

/** The most recently continued conversations within the filter (see ConversationSummary). */
export function recentConversations(db: Database, filter: UsageFilter, limit: number): ConversationSummary[] {
  if (!(limit > 0)) return [];
  const ids = candidates(db, filter, limit);
  const parts = partsOf('sessions', filter, {
    sql: 'session_id IN (SELECT value FROM json_each(?))',
    params: [JSON.stringify(ids)],
    index: 'usage_sessions_id',
  });
  const rows = db
    .prepare(
      `SELECT min(backend) AS backend, coalesce(min(served_model), min(model), '(none)') AS model,
           min(first_ts) AS started, max(last_ts) AS last, sum(turns) AS turns
         FROM (${parts.map((p) => p.sql).join(' UNION ALL ')})
         GROUP BY session_id ORDER BY last DESC, session_id LIMIT ?`,
    )
    .all(...parts.flatMap((p) => p.params), limit) as {
    backend: string | null;
    model: string;
    started: number;
    last: number;
    turns: number;
  }[];
  return rows.map((r) => ({
    backend: r.backend,
    model: r.model,
    started_at: new Date(r.started).toISOString(),
    last_at: new Date(r.last).toISOString(),
    turns: r.turns,
  }));
}
