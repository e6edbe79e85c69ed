// Strings a client or a script chose (a refused model id, a key name, a policy's model list) reach
// the owner's terminal only with their control characters escaped: an ESC or BEL printed raw sets
// the terminal's title, clears the screen or rewrites what the owner reads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { printable } from '../../src/cli/output.js';
import { startTestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';

/** Sets the terminal title to "pwned", rings the bell, clears the screen; a C1 CSI and a line break for good measure. */
const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\x9b31m\nfake-row';
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x0afake-row';
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

function olp(args: string[]) {
  return spawnSync(process.execPath, [OLP_BIN, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
}

describe('terminal output of stored client strings', () => {
  it('printable escapes C0, DEL, C1 and bidi controls and leaves other text alone', () => {
    assert.equal(printable(HOSTILE), SHOWN);
    assert.equal(printable('\x7f\t\u202e'), '\\x7f\\x09\\u{202e}');
    assert.equal(printable('claude-sonnet-5 ünïcödé ✓'), 'claude-sonnet-5 ünïcödé ✓');
  });

  it('olp usage --by model, keys list and keys add print a hostile model id and key name escaped', async () => {
    const t = await startTestDaemon();
    try {
      const r = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: HOSTILE, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(r.status, 404);
      await r.text();
      t.daemon.store.keys.update('tester', { policy: { models: [`claude-${HOSTILE}`] } });
      await t.close(true);

      const usage = olp(['usage', '--by', 'model', '--state-dir', t.stateDir]);
      assert.equal(usage.status, 0, usage.stderr);
      assert.ok(usage.stdout.includes(SHOWN), usage.stdout);
      assert.doesNotMatch(usage.stdout, RAW_CONTROL);
      // The table stays one row per model: the line break inside the id does not start a row.
      assert.ok(!/^fake-row/m.test(usage.stdout), usage.stdout);

      const list = olp(['keys', 'list', '--state-dir', t.stateDir]);
      assert.equal(list.status, 0, list.stderr);
      assert.ok(list.stdout.includes(`claude-${SHOWN}`), list.stdout);
      assert.doesNotMatch(list.stdout, RAW_CONTROL);
      const show = olp(['keys', 'show', 'tester', '--state-dir', t.stateDir]);
      assert.ok(show.stdout.includes(`claude-${SHOWN}`), show.stdout);
      assert.doesNotMatch(show.stdout, RAW_CONTROL);

      // A key name is refused, and the refusal quotes it escaped.
      const add = olp(['keys', 'add', `kid${HOSTILE}`, '--state-dir', t.stateDir]);
      assert.equal(add.status, 1);
      assert.ok(add.stderr.includes(`kid${SHOWN}`), add.stderr);
      assert.doesNotMatch(add.stderr, RAW_CONTROL);
    } finally {
      await t.close();
    }
  });
});
