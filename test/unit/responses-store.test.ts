// Stored responses: item_reference and previous_response_id look-ups go through an index and never
// read (or parse) a stored Response body, on new stores and on stores migrated from before the index.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, type StoredResponse } from '../../src/store/index.js';
import { callOfItem } from '../../src/wire/index.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'olp-responses-store-'));
  dirs.push(d);
  return d;
}

/** A stored response with a message and a function call among its output items. */
function response(keyId: string, n: number, previousResponseId: string | null): StoredResponse {
  const output = [
    {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `reply ${n}`, annotations: [] }],
    },
    {
      id: `fc_${n}`,
      type: 'function_call',
      call_id: `call_${n}`,
      name: 'lookup',
      arguments: `{"n":${n}}`,
      status: 'completed',
    },
  ];
  return {
    id: `resp_${n}`,
    keyId,
    createdAt: 1_000 + n,
    previousResponseId,
    items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `ask ${n}` }] }],
    messages: [{ role: 'user', content: `ask ${n}` }],
    outputText: `reply ${n}`,
    body: { id: `resp_${n}`, object: 'response', output, padding: 'x'.repeat(10_000) },
  };
}

/** Overwrites every stored Response body with text that does not parse: a look-up that reads one fails. */
function spoilBodies(dir: string): void {
  const db = new BetterSqlite3(join(dir, 'olp.db'));
  db.prepare("UPDATE responses SET body = 'not json'").run();
  db.close();
}

function checkLookups(store: ReturnType<typeof openStore>, keyId: string): void {
  const found = store.responses.items(keyId, ['msg_1', 'fc_2', 'msg_1', 'msg_nobody']);
  assert.deepEqual([...found.keys()].sort(), ['fc_2', 'msg_1']);
  assert.deepEqual(found.get('msg_1')!.item.content, [{ type: 'output_text', text: 'reply 1', annotations: [] }]);
  assert.equal(found.get('fc_2')!.item.call_id, 'call_2');
  assert.ok(found.get('msg_1')!.bytes > 50);
  const chain = store.responses.chain(keyId, 'resp_3');
  assert.deepEqual(
    chain.map((l) => l.outputText),
    ['reply 1', 'reply 2', 'reply 3'],
  );
  assert.deepEqual(
    chain.map((l) => l.toolCalls.map(callOfItem)),
    [1, 2, 3].map((n) => [{ id: `call_${n}`, name: 'lookup', arguments: `{"n":${n}}` }]),
  );
  assert.deepEqual(chain[0]!.messages, [{ role: 'user', content: 'ask 1' }]);
}

describe('the stored responses index', () => {
  it('item and chain look-ups read no Response body', () => {
    const dir = freshDir();
    const store = openStore(dir);
    const { key } = store.keys.add('kid');
    store.responses.save(response(key.id, 1, null));
    store.responses.save(response(key.id, 2, 'resp_1'));
    store.responses.save(response(key.id, 3, 'resp_2'));
    spoilBodies(dir);
    checkLookups(store, key.id);
    // Another key finds none of them.
    const other = store.keys.add('other').key;
    assert.equal(store.responses.items(other.id, ['msg_1']).size, 0);
    assert.deepEqual(store.responses.chain(other.id, 'resp_3'), []);
    store.close();
  });

  it('a store from before the index gets its items indexed when it is opened', () => {
    const dir = freshDir();
    let store = openStore(dir);
    const { key } = store.keys.add('kid');
    for (const [n, prev] of [
      [1, null],
      [2, 'resp_1'],
      [3, 'resp_2'],
    ] as const)
      store.responses.save(response(key.id, n, prev));
    store.close();
    // Back to the schema before the index, as an older olp left it.
    const db = new BetterSqlite3(join(dir, 'olp.db'));
    const version = Number(db.pragma('user_version', { simple: true }));
    // (and before the logins, settings, admin actions, sent alerts, ledger paging indexes, login refusals and the ledger's running totals that came after it)
    db.exec(`DROP TRIGGER responses_items_gone; DROP TABLE response_items;
      DROP TABLE logins; ALTER TABLE keys DROP COLUMN login; ALTER TABLE usage DROP COLUMN login;
      DROP TABLE settings; DROP TABLE admin_actions; DROP TABLE alerts_sent;
      DROP INDEX usage_ts_id; CREATE INDEX usage_ts ON usage (ts);
      DROP INDEX usage_key_ts_id; CREATE INDEX usage_key_ts ON usage (key_id, ts);
      DROP TABLE usage_totals; DROP TABLE usage_errors; DROP TABLE usage_sessions;`);
    db.pragma(`user_version = ${version - 8}`);
    db.close();
    store = openStore(dir);
    spoilBodies(dir);
    checkLookups(store, key.id);
    store.close();
  });

  it('deleting or pruning a response takes its items out of the index', () => {
    const dir = freshDir();
    const store = openStore(dir);
    const { key } = store.keys.add('kid');
    store.responses.save(response(key.id, 1, null));
    store.responses.save(response(key.id, 2, null));
    assert.equal(store.responses.delete(key.id, 'resp_1'), true);
    assert.deepEqual([...store.responses.items(key.id, ['msg_1', 'msg_2']).keys()], ['msg_2']);
    assert.equal(store.responses.prune(5_000), 1);
    assert.equal(store.responses.items(key.id, ['msg_2']).size, 0);
    store.close();
  });
});
