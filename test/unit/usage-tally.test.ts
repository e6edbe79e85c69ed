// The roll-up's summary over exported rows reads exactly as `store.usage.summarize` over the table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUsageTally, openMemoryStore, usageGroupOf, type Store, type UsageRow } from '../../src/store/index.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 28, 23, 59, 59, 999);

/** A row of every kind the ledger holds: ok, failed, refused, cut off; cached, costed, uncosted. */
function rowOf(i: number, over: Partial<UsageRow>): UsageRow {
  return {
    requestId: `req_${String(i).padStart(4, '0')}`,
    ts: T0 + (i % 4) * DAY + (i % 3),
    keyId: null,
    keyName: null,
    backend: 'claude',
    model: 'sonnet',
    servedModel: 'sonnet',
    outcome: 'ok',
    errorCode: null,
    status: 200,
    queueMs: 0,
    ttftMs: 5,
    durationMs: 9,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    reasoningTokens: 0,
    rawUsage: null,
    partial: false,
    costUsd: null,
    sessionId: null,
    sessionMode: 'ephemeral',
    rotationReason: null,
    ...over,
  };
}

function fill(store: Store): void {
  const alice = store.keys.add('alice', 'owner').key;
  const bob = store.keys.add('bob').key;
  const who = [alice, bob, alice, null];
  const models: [string | null, string | null][] = [
    ['sonnet', 'sonnet'],
    ['opus', 'sonnet'], // a fallback: the served model counts
    ['gpt-5', 'gpt-5'],
    ['model-\u{1F600}', null], // astral: SQLite's byte order, not UTF-16's
    ['model-\uFFFD', null],
    [null, null],
  ];
  const costs = [null, 0.1, 0.2, 0.3, 1e-7, 12345.6789, 0.07];
  for (let i = 0; i < 60; i++) {
    const key = who[i % who.length]!;
    const [model, servedModel] = models[i % models.length]!;
    const kind = i % 5;
    const refused = kind === 3;
    store.usage.record(
      rowOf(i, {
        keyId: key?.id ?? null,
        keyName: key?.name ?? null,
        model,
        servedModel: refused ? null : servedModel,
        backend: refused ? null : i % 2 ? 'codex' : 'claude',
        login: refused ? null : i % 7 === 0 ? 'family' : null,
        outcome: ['ok', 'ok', 'error', 'rejected', 'client_aborted'][kind]!,
        status: [200, 200, 502, 429, 499][kind]!,
        errorCode: kind === 0 || kind === 1 ? null : 'x',
        promptTokens: refused ? 0 : 100 + i * 7,
        cachedTokens: refused ? 0 : (i * 13) % 90,
        completionTokens: refused ? 0 : 3 * i,
        partial: kind === 4,
        costUsd: refused ? null : costs[i % costs.length]!,
      }),
    );
  }
}

describe('usage tally over exported rows', () => {
  for (const by of ['key', 'day', 'model', 'login'] as const) {
    it(`--by ${by}: the same groups and figures as store.usage.summarize`, () => {
      const store = openMemoryStore();
      try {
        fill(store);
        for (const filter of [
          { scope: { all: true } as const },
          { scope: { all: true } as const, sinceMs: T0 + DAY, untilMs: T0 + 3 * DAY },
        ]) {
          const tally = createUsageTally();
          for (const row of store.usage.export(filter)) tally.add(usageGroupOf(row, by), row);
          const want = store.usage.summarize(filter, by);
          assert.ok(want.length > 1, 'the ledger has several groups');
          // Costs are floating point: the store adds the rows' costs a day at a time (its running
          // totals), the tally row by row, both by SQLite's compensated sum; they agree to the last
          // bit or two.
          const got = tally.groups();
          assert.deepEqual(
            got.map((g) => ({ ...g, costUsd: null })),
            want.map((g) => ({ ...g, costUsd: null })),
          );
          got.forEach((g, i) => {
            const w = want[i]!.costUsd;
            if (w === null || g.costUsd === null) assert.equal(g.costUsd, w);
            else assert.ok(Math.abs(g.costUsd - w) <= 1e-12 * Math.abs(w), `${g.group}: ${g.costUsd} ≠ ${w}`);
          });
        }
      } finally {
        store.close();
      }
    });
  }

  it('the groups hold refusals, uncosted-only groups and the login labels as the table does', () => {
    const store = openMemoryStore();
    try {
      fill(store);
      const tally = createUsageTally();
      for (const row of store.usage.export({ scope: { all: true } })) tally.add(usageGroupOf(row, 'login'), row);
      assert.deepEqual(
        tally.groups().map((g) => g.group),
        ['(no CLI)', 'family', 'machine'],
      );
      const refused = tally.groups()[0]!;
      assert.equal(refused.ok, 0);
      assert.equal(refused.cacheHitShare, null);
      assert.equal(refused.costUsd, null);
    } finally {
      store.close();
    }
  });
});

describe('usage export', () => {
  it('reads every row once, oldest first, across pages, with a write between pages', () => {
    const store = openMemoryStore();
    try {
      for (let i = 0; i < 1234; i++) store.usage.record(rowOf(i, { ts: T0 + Math.floor(i / 3) }));
      const ids: string[] = [];
      for (const row of store.usage.export({ scope: { all: true } })) {
        ids.push(row.request_id);
        // Nothing is left open between rows: the connection takes other statements.
        if (ids.length === 600) store.usage.record(rowOf(9999, { ts: T0 - 1 }));
      }
      assert.equal(ids.length, 1234);
      assert.equal(new Set(ids).size, 1234);
      const times = [...store.usage.export({ scope: { all: true } })].map((r) => `${r.time} ${r.request_id}`);
      assert.deepEqual(times, [...times].sort());
    } finally {
      store.close();
    }
  });
});
