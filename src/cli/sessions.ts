import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/index.js';
import { UsageError } from './usage-error.js';
import { printable, toColumns } from './output.js';

export { SESSION_FLAGS, SESSIONS_HELP } from './sessions-help.js';

function age(ms: number | null, now: number): string {
  if (ms === null) return '-';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  return `${(s / 3600).toFixed(1)}h`;
}

/** `olp sessions list [--key NAME]`: the slots of active keys. */
function listText(store: Store, byId: Map<string, { name: string }>, keyId: string | undefined): string {
  const now = Date.now();
  const rows = store.slots.list().filter((s) => byId.has(s.keyId) && (!keyId || s.keyId === keyId));
  if (rows.length === 0) return 'no session slots yet\n';
  const head = ['KEY', 'BACKEND', 'SLOT', 'SESSION', 'AGE', 'IDLE', 'TURNS', 'ROTATIONS', 'LAST ROTATION', 'STATE'];
  const table = [[...head, 'CACHE HIT']];
  for (const s of rows) {
    const share = store.usage.cacheHitShare(s.keyId);
    table.push(
      [
        byId.get(s.keyId)!.name,
        s.backend,
        String(s.slot),
        s.sessionId ? `${s.sessionId.slice(0, 8)}…` : '-',
        age(s.createdAt, now),
        age(s.lastUsedAt, now),
        String(s.turns),
        String(s.rotations),
        s.lastReason ?? '-',
        s.dirty ? 'will rotate' : s.sessionId ? 'ready' : 'empty',
        share === null ? '-' : `${Math.round(share * 100)}%`,
      ].map(printable),
    );
  }
  return toColumns(table);
}

/** `olp sessions …`: returns the exit code. */
export function runSessions(
  store: Store,
  slotsDir: string,
  sub: string | undefined,
  values: Record<string, string | boolean | undefined>,
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  const keys = store.keys.list().filter((k) => !k.revokedAt);
  const byId = new Map(keys.map((k) => [k.id, k]));
  const name = typeof values.key === 'string' ? values.key : undefined;
  const key = name === undefined ? undefined : keys.find((k) => k.name === name);
  if (name !== undefined && !key) {
    err(`olp: no active key named '${name}'\n`);
    return 1;
  }
  switch (sub) {
    case 'list':
      out(listText(store, byId, key?.id));
      return 0;
    case 'rotate': {
      if (!key && !values.all) throw new UsageError('usage: olp sessions rotate --key NAME | --all');
      const n = store.slots.rotate(key?.id);
      // The CLIs' own session files of those slots go too.
      rmSync(key ? join(slotsDir, key.id) : slotsDir, { recursive: true, force: true });
      out(`${n} slot(s) will start a fresh session on their next request\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown sessions command '${sub ?? ''}' (list, rotate)`);
  }
}
