import type { Database } from 'better-sqlite3';

/**
 * What an owner (through `/olp/keys`) or the operator (`olp keys`) did to a key, or what a key did
 * to its own login from the usage page (`/olp/me/login`).
 */
export type AdminActionKind =
  | 'key_created'
  | 'key_updated'
  | 'key_rotated'
  | 'key_revoked'
  | 'login_connect'
  | 'login_remove'
  | 'login_device_start'
  | 'login_device_end';

/** One recorded change: who did it (a key's name, or `cli`), to which key or login, and the fields it set. */
export interface AdminAction {
  id: number;
  /** ISO time. */
  at: string;
  actor: string;
  action: AdminActionKind;
  target: string;
  /** The fields set and their new values; never a token or its hash. */
  changes: Record<string, unknown>;
}

interface Row {
  id: number;
  at: string;
  actor: string;
  action: AdminActionKind;
  target: string;
  changes: string;
}

/** How many recorded changes are kept: the page shows the recent ones, not an archive. */
const KEEP = 10_000;

/** The log of changes to keys, newest last, trimmed to the latest `KEEP`. */
export function createAdminActionStore(db: Database) {
  const insert = db.prepare('INSERT INTO admin_actions (at, actor, action, target, changes) VALUES (?, ?, ?, ?, ?)');
  const trim = db.prepare('DELETE FROM admin_actions WHERE id <= ?');
  const latest = db.prepare<[number], Row>('SELECT * FROM admin_actions ORDER BY id DESC LIMIT ?');
  return {
    /** Records one change. */
    record(a: Omit<AdminAction, 'id' | 'at'>, now = Date.now()): AdminAction {
      const at = new Date(now).toISOString();
      const id = Number(insert.run(at, a.actor, a.action, a.target, JSON.stringify(a.changes)).lastInsertRowid);
      if (id > KEEP && id % 100 === 0) trim.run(id - KEEP);
      return { id, at, ...a };
    },
    /** The latest `limit` changes, newest first. */
    latest(limit: number): AdminAction[] {
      return latest.all(limit).map((r) => ({ ...r, changes: JSON.parse(r.changes) as Record<string, unknown> }));
    },
  };
}

export type AdminActionStore = ReturnType<typeof createAdminActionStore>;
