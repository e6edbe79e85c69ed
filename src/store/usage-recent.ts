import type { Database } from 'better-sqlite3';
import type { UsageFilter } from './usage-where.js';
import { totalsOf } from './usage-source.js';

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

/** The most recently continued conversations within the filter (see ConversationSummary). */
export function recentConversations(db: Database, filter: UsageFilter, limit: number): ConversationSummary[] {
  const src = totalsOf('sessions', filter);
  const rows = db
    .prepare(
      `SELECT min(backend) AS backend, coalesce(min(served_model), min(model), '(none)') AS model,
           min(first_ts) AS started, max(last_ts) AS last, sum(turns) AS turns
         FROM (${src.sql})
         GROUP BY session_id ORDER BY last DESC LIMIT ?`,
    )
    .all(...src.params, limit) as {
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
