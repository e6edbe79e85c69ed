// The ledger's views read running totals (src/store/usage-rollup.ts) instead of scanning its rows:
// every answer must be the one the scan gave. The scans below are the queries the views ran before,
// kept as the reference; each view is compared with them field by field over a seeded ledger, after
// a prune, and after the schema step that makes the totals from a ledger written before them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { openStore, type Store, type UsageFilter, type UsageRow } from '../../src/store/index.js';

const DAY = 86_400_000;

// ---- The reference: the scans the views ran before the totals (unchanged SQL). ----

function where(f: UsageFilter, ...also: string[]): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if ('keyId' in f.scope) {
    clauses.push('key_id = ?');
    params.push(f.scope.keyId);
  } else if (f.keyId) {
    clauses.push('key_id = ?');
    params.push(f.keyId);
  }
  if (f.keyName !== undefined) {
    clauses.push('key_name = ?');
    params.push(f.keyName);
  }
  if (f.sinceMs !== undefined) {
    clauses.push('ts >= ?');
    params.push(f.sinceMs);
  }
  if (f.untilMs !== undefined) {
    clauses.push('ts < ?');
    params.push(f.untilMs);
  }
  clauses.push(...also);
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

const GROUP_BY = {
  key: "coalesce(key_name, '(no key)')",
  day: "strftime('%Y-%m-%d', ts / 1000, 'unixepoch')",
  model: "coalesce(served_model, model, '(none)')",
  login: "CASE WHEN backend IS NULL THEN '(no CLI)' ELSE coalesce(login, 'machine') END",
} as const;

type Row = Record<string, unknown>;

function oldSummarize(db: Database, f: UsageFilter, by: keyof typeof GROUP_BY) {
  const w = where(f);
  const rows = db
    .prepare(
      `SELECT ${GROUP_BY[by]} AS grp, count(*) AS requests,
           sum(outcome = 'ok') AS ok, sum(outcome <> 'ok') AS errors,
           sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, sum(completion_tokens) AS completion,
           sum(CASE WHEN outcome = 'ok' THEN prompt_tokens ELSE 0 END) AS ok_prompt,
           sum(CASE WHEN outcome = 'ok' THEN cached_tokens ELSE 0 END) AS ok_cached,
           sum(cost_usd) AS cost
         FROM usage ${w.sql} GROUP BY grp ORDER BY grp`,
    )
    .all(...w.params) as Row[];
  return rows.map((r) => ({
    group: r.grp,
    requests: r.requests,
    ok: r.ok,
    errors: r.errors,
    promptTokens: r.prompt,
    cachedTokens: r.cached,
    completionTokens: r.completion,
    cacheHitShare: (r.ok_prompt as number) > 0 ? (r.ok_cached as number) / (r.ok_prompt as number) : null,
    costUsd: r.cost,
  }));
}

/**
 * The old daily scan, but for its GROUP BY: `GROUP BY day, key, model` named the table's column
 * `model` (the model asked for), not the result's (the one that answered), so it grouped by the model
 * asked for and labelled each group with the model one of its rows was answered by. The rows are
 * per day, key and model that answered, as the view's documentation says: GROUP BY 1, 2, 3.
 */
function oldDaily(db: Database, f: UsageFilter) {
  const w = where(f);
  const rows = db
    .prepare(
      `SELECT ${GROUP_BY.day} AS day, coalesce(key_name, '(no key)') AS key, ${GROUP_BY.model} AS model,
           count(*) AS requests, sum(outcome = 'ok') AS ok, sum(prompt_tokens) AS prompt,
           sum(cached_tokens) AS cached, sum(completion_tokens) AS completion, sum(cost_usd) AS cost
         FROM usage ${w.sql} GROUP BY 1, 2, 3 ORDER BY day, key, model`,
    )
    .all(...w.params) as Row[];
  return rows.map((r) => ({
    day: r.day,
    key: r.key,
    model: r.model,
    requests: r.requests,
    ok: r.ok,
    promptTokens: r.prompt,
    cachedTokens: r.cached,
    completionTokens: r.completion,
    costUsd: r.cost,
  }));
}

/** The old breakdown scans; conversations that ended at the same ms (its order left them in any) by id. */
function oldBreakdown(db: Database, f: UsageFilter, limit: number) {
  const ok = where(f, "outcome = 'ok'");
  const failed = where(f, "outcome <> 'ok'");
  const sessions = where(f, "outcome = 'ok'", 'session_id IS NOT NULL');
  return {
    models: db
      .prepare(
        `SELECT coalesce(served_model, model, '(none)') AS model, count(*) AS requests,
           sum(prompt_tokens) AS promptTokens, sum(completion_tokens) AS completionTokens
         FROM usage ${ok.sql} GROUP BY 1 ORDER BY requests DESC, model`,
      )
      .all(...ok.params),
    errors: db
      .prepare(
        `SELECT coalesce(error_code, outcome) AS code, max(status) AS status, count(*) AS requests
         FROM usage ${failed.sql} GROUP BY 1 ORDER BY requests DESC, code`,
      )
      .all(...failed.params),
    conversations: (
      db
        .prepare(
          `SELECT min(backend) AS backend, coalesce(min(served_model), min(model), '(none)') AS model,
           min(ts) AS started, max(ts) AS last, count(*) AS turns
         FROM usage ${sessions.sql}
         GROUP BY session_id ORDER BY last DESC, session_id LIMIT ?`,
        )
        .all(...sessions.params, limit) as Row[]
    ).map((r) => ({
      backend: r.backend,
      model: r.model,
      started_at: new Date(r.started as number).toISOString(),
      last_at: new Date(r.last as number).toISOString(),
      turns: r.turns,
    })),
  };
}

function oldCacheHitShare(db: Database, keyId: string): number | null {
  const r = db
    .prepare(
      `SELECT sum(cached_tokens) AS cached, sum(prompt_tokens) AS prompt FROM usage
       WHERE key_id = ? AND outcome = 'ok'`,
    )
    .get(keyId) as { cached: number | null; prompt: number | null };
  return r?.prompt ? (r.cached ?? 0) / r.prompt : null;
}

// ---- A ledger with a bit of everything. ----

/** A small seeded generator (mulberry32): the same ledger every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOW = Date.now();
const START = Math.floor((NOW - 20 * DAY) / DAY) * DAY;

function seedRows(keys: { id: string; name: string }[], n: number): UsageRow[] {
  const r = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const rows: UsageRow[] = [];
  for (let i = 0; i < n; i++) {
    // Distinct, increasing times over 20 days, some exactly at a UTC midnight.
    const ts = i % 97 === 0 ? START + (i % 20) * DAY : START + Math.floor((i / n) * 20 * DAY) + (i % 13);
    const key = i % 41 === 0 ? null : pick(keys);
    const outcome = pick(['ok', 'ok', 'ok', 'ok', 'error', 'client_aborted', 'timeout', 'rejected']);
    const backend = outcome === 'rejected' ? null : pick(['claude', 'codex']);
    const answered = outcome === 'ok' || outcome === 'client_aborted';
    const prompt = answered ? Math.floor(r() * 5000) : 0;
    rows.push({
      requestId: `req-${i}`,
      ts,
      keyId: key?.id ?? null,
      keyName: key?.name ?? null,
      endpoint: pick(['chat.completions', 'responses']),
      backend,
      model: r() < 0.05 ? null : pick(['sonnet', 'opus', 'gpt-5']),
      servedModel: backend && r() < 0.8 ? pick(['claude-sonnet-4-5', 'claude-opus-4-1', 'gpt-5']) : null,
      outcome,
      errorCode: outcome === 'error' ? pick(['backend_error', 'backend_exit']) : outcome === 'timeout' ? 'x' : null,
      status: pick([200, 499, 502, 504, 429]),
      queueMs: null,
      ttftMs: null,
      durationMs: null,
      promptTokens: prompt,
      completionTokens: answered ? Math.floor(r() * 800) : 0,
      cachedTokens: Math.floor(prompt * r()),
      reasoningTokens: 0,
      rawUsage: null,
      partial: outcome === 'client_aborted',
      estimated: outcome === 'client_aborted' && r() < 0.5,
      costUsd: r() < 0.6 ? Math.round(r() * 1e6) / 1e7 : null,
      sessionId: backend && r() < 0.9 ? `s-${Math.floor(i / 15)}-${Math.floor(r() * 3)}` : null,
      sessionMode: null,
      rotationReason: null,
      login: r() < 0.3 ? null : pick(['alice', 'work']),
    });
  }
  return rows;
}

// ---- The comparison. ----

/** Equal field by field; sums of costs (floating point, added a day at a time) to 1e-12 of their size. */
function same(actual: unknown, expected: unknown, where: string): void {
  if (typeof expected === 'number' && typeof actual === 'number' && !Number.isInteger(expected)) {
    assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.abs(expected), `${where}: ${actual} ≠ ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), where);
    for (let i = 0; i < Math.max(actual.length, expected.length); i++) same(actual[i], expected[i], `${where}[${i}]`);
  } else if (expected !== null && typeof expected === 'object') {
    assert.equal(typeof actual, 'object', where);
    assert.deepEqual(Object.keys(actual as object), Object.keys(expected), where);
    for (const [k, v] of Object.entries(expected)) same((actual as Row)[k], v, `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

function filtersOf(keys: { id: string; name: string }[]): [string, UsageFilter][] {
  const mid = START + 5 * DAY + 37_123;
  return [
    ['all', { scope: { all: true } }],
    ['one key', { scope: { keyId: keys[0]!.id } }],
    ['a key of all', { scope: { all: true }, keyId: keys[1]!.id }],
    ['a key name', { scope: { all: true }, keyName: keys[2]!.name }],
    ['since a midnight', { scope: { all: true }, sinceMs: START + 3 * DAY }],
    ['since mid-day', { scope: { all: true }, sinceMs: mid }],
    ['until mid-day', { scope: { keyId: keys[1]!.id }, untilMs: mid + 4 * DAY }],
    ['both mid-day', { scope: { all: true }, sinceMs: mid, untilMs: mid + 9 * DAY + 5_000 }],
    ['within one day', { scope: { all: true }, sinceMs: mid, untilMs: mid + 3_600_000 }],
    [
      'midnight to midnight',
      { scope: { all: true }, keyName: keys[0]!.name, sinceMs: START, untilMs: START + 2 * DAY },
    ],
    ['since after until', { scope: { all: true }, sinceMs: mid + DAY, untilMs: mid }],
    ['from the epoch', { scope: { all: true }, sinceMs: 0, untilMs: 8e15 }],
    ['far past', { scope: { all: true }, sinceMs: -8e15 }],
    ['30 days of a key', { scope: { keyId: keys[2]!.id }, sinceMs: START - 10 * DAY }],
  ];
}

function compareAll(store: Store, db: Database, keys: { id: string; name: string }[]): void {
  for (const [name, f] of filtersOf(keys)) {
    for (const by of ['key', 'day', 'model', 'login'] as const)
      same(store.usage.summarize(f, by), oldSummarize(db, f, by), `${name} by ${by}`);
    same(store.usage.daily(f), oldDaily(db, f), `${name} daily`);
    same(store.usage.breakdown(f, 10), oldBreakdown(db, f, 10), `${name} breakdown`);
    same(store.usage.breakdown(f, 10_000), oldBreakdown(db, f, 10_000), `${name} breakdown, every conversation`);
  }
  for (const k of keys) same(store.usage.cacheHitShare(k.id), oldCacheHitShare(db, k.id), `cache share ${k.name}`);
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function seededStore(n: number) {
  const dir = mkdtempSync(join(tmpdir(), 'olp-ledger-totals-'));
  dirs.push(dir);
  const store = openStore(dir);
  const keys = ['owner', 'alice', 'kid'].map((name, i) => store.keys.add(name, i === 0 ? 'owner' : 'member').key);
  const rows = seedRows(keys, n);
  // Some one at a time as requests write them, the rest in one transaction.
  for (const row of rows.slice(0, 200)) store.usage.record(row);
  store.usage.recordMany(rows.slice(200));
  return { dir, store, keys, db: new BetterSqlite3(join(dir, 'olp.db'), { readonly: true }) };
}

describe('the ledger views read running totals and answer as the scan of the rows did', () => {
  it('every view, over filters of whole days, parts of days, keys and names', () => {
    const { store, keys, db } = seededStore(4000);
    assert.equal((db.prepare('SELECT count(*) AS n FROM usage').get() as { n: number }).n, 4000);
    compareAll(store, db, keys);
    db.close();
    store.close();
  });

  it('after a prune that cuts into a day, and after more rows', () => {
    const { store, keys, db } = seededStore(3000);
    const cutoff = START + 6 * DAY + 12_345_678;
    const gone = (db.prepare('SELECT count(*) AS n FROM usage WHERE ts < ?').get(cutoff) as { n: number }).n;
    // prune's cutoff is a time back from now.
    assert.equal(store.usage.prune(cutoff), gone);
    compareAll(store, db, keys);
    store.usage.recordMany(
      seedRows(keys, 300).map((r) => ({ ...r, requestId: `more-${r.requestId}`, ts: r.ts + DAY })),
    );
    compareAll(store, db, keys);
    db.close();
    store.close();
  });

  it('a state dir written before the totals: its first open makes them from the rows, in place', () => {
    const { dir, store, keys, db } = seededStore(3000);
    const before = keys.map((k) => store.usage.summarize({ scope: { all: true }, keyId: k.id }, 'day'));
    store.close();
    db.close();
    // The schema as the previous version left it: no totals, one step fewer.
    const raw = new BetterSqlite3(join(dir, 'olp.db'));
    const version = raw.pragma('user_version', { simple: true }) as number;
    raw.exec('DROP TABLE usage_totals; DROP TABLE usage_errors; DROP TABLE usage_sessions;');
    raw.pragma(`user_version = ${version - 1}`);
    raw.close();
    const again = openStore(dir);
    const check = new BetterSqlite3(join(dir, 'olp.db'), { readonly: true });
    assert.equal(check.pragma('user_version', { simple: true }), version);
    compareAll(again, check, keys);
    same(
      keys.map((k) => again.usage.summarize({ scope: { all: true }, keyId: k.id }, 'day')),
      before,
      'totals before and after the upgrade',
    );
    check.close();
    again.close();
  });
});
