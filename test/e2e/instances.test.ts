// Several olp instances behind one front door: each mints keys carrying its tag, and a key sent to
// the wrong instance is told where it belongs instead of being called unknown.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../../src/config/index.js';
import { openMemoryStore, tokenTag } from '../../src/store/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN } from '../support/paths.js';

const TAGGED = /^olpk_a1_[A-Za-z0-9_-]{43}$/;

describe('instance tags in keys', () => {
  it('a tagged store mints and rotates olpk_<tag>_… tokens; the hint shows the tag', () => {
    const store = openMemoryStore({ instanceTag: 'a1' });
    const { key, token } = store.keys.add('alice');
    assert.match(token, TAGGED);
    assert.equal(key.hint, token.slice(0, 'olpk_a1_'.length + 4));
    const rotated = store.keys.rotate('alice');
    assert.match(rotated, TAGGED);
    assert.equal(store.keys.authenticate(rotated)?.name, 'alice');
    assert.equal(store.keys.authenticate(token), undefined);
    store.close();
  });

  it('an untagged store mints untagged tokens, as before', () => {
    const store = openMemoryStore();
    const { key, token } = store.keys.add('bob');
    assert.match(token, /^olpk_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.hint, token.slice(0, 'olpk_'.length + 4));
    store.close();
  });

  it('tokenTag reads the tag only from the exact tagged shape', () => {
    const body = 'A'.repeat(43);
    assert.equal(tokenTag(`olpk_a1_${body}`), 'a1');
    assert.equal(tokenTag(`olpk_${body}`), null, 'an untagged key, even one whose random part has an underscore');
    assert.equal(tokenTag(`olpk_ab_${'A'.repeat(40)}`), null, 'an untagged key of 43 characters is not read as tagged');
    assert.equal(tokenTag(`olpk_AB_${body}`), null, 'tags are lower-case');
    assert.equal(tokenTag(`olpk_${'a'.repeat(17)}_${body}`), null, 'at most 16 characters');
    assert.equal(tokenTag(`olpk_a1_${body}x`), null);
    assert.equal(tokenTag(`sk-a1_${body}`), null);
  });
});

describe('peers', () => {
  it('a peer URL with a user or password in it is refused at start (the 421 would tell it to anyone)', () => {
    assert.throws(
      () => parseConfig({ readFile: false, env: {}, overrides: { peers: ['b2=http://olp:secret@10.0.0.3:8787'] } }),
      (e: Error) => /no user or password/.test(e.message) && !e.message.includes('secret'),
    );
    assert.deepEqual(parseConfig({ readFile: false, env: { OLP_PEERS: 'b2=http://10.0.0.3:8787' } }).peers, [
      'b2=http://10.0.0.3:8787',
    ]);
  });
});

describe('two instances', () => {
  let a: TestDaemon;
  let b: TestDaemon;
  before(async () => {
    b = await startTestDaemon({ config: { instanceTag: 'b2' } });
    a = await startTestDaemon({ config: { instanceTag: 'a1', peers: [`b2=${b.url}`] } });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  const chat = (t: TestDaemon, token: string) =>
    fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('each serves its own keys, which carry its tag', async () => {
    assert.equal(tokenTag(a.token), 'a1');
    assert.equal(tokenTag(b.token), 'b2');
    assert.equal((await chat(a, a.token)).status, 200);
    assert.equal((await chat(b, b.token)).status, 200);
  });

  it('a key of a known peer gets 421 wrong_instance naming it and its URL', async () => {
    const res = await chat(a, b.token);
    assert.equal(res.status, 421);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    assert.equal(body.error.code, 'wrong_instance');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.ok(body.error.message.includes(`instance 'b2' at ${b.url}/v1`), body.error.message);
    assert.ok(body.error.message.includes("this is instance 'a1'"), body.error.message);
    assert.ok(!body.error.message.includes(b.token));
  });

  it('a key of an instance this one does not know is named by its tag alone; Anthropic clients get their envelope', async () => {
    const res = await fetch(`${b.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 421);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /belongs to the olp instance 'a1', and this is instance 'b2'/);
  });

  it("an unknown key with this instance's own tag, or none, is still 401 invalid_api_key", async () => {
    for (const token of [`olpk_a1_${'Z'.repeat(43)}`, `olpk_${'Z'.repeat(43)}`, 'nonsense']) {
      const res = await chat(a, token);
      assert.equal(res.status, 401, token);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
    }
  });

  it("the owner's /health says which instance this is and its peers; the public one does not", async () => {
    const owner = (await (
      await fetch(`${a.url}/health`, { headers: { authorization: `Bearer ${a.token}` } })
    ).json()) as {
      instance: { tag: string; peers: Record<string, string> };
    };
    assert.deepEqual(owner.instance, { tag: 'a1', peers: { b2: b.url } });
    const open = (await (await fetch(`${a.url}/health`)).json()) as Record<string, unknown>;
    assert.equal(open.instance, undefined);
  });

  it("a front door's x-request-id is logged beside olp's own; a malformed one is not", async () => {
    const send = (id: string) =>
      fetch(`${a.url}/v1/models`, { headers: { authorization: `Bearer ${a.token}`, 'x-request-id': id } });
    const good = await send('9f86d081884c7d659a2feaa0c55ad015');
    assert.match(good.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/, "the response carries olp's own id");
    await send('has "quotes" and spaces');
    const lines = a.logs.filter((l) => l.event === 'request' && l.path === '/v1/models');
    assert.ok(lines.some((l) => l.forwardedId === '9f86d081884c7d659a2feaa0c55ad015'));
    assert.ok(lines.some((l) => l.forwardedId === undefined));
  });
});

describe('olp keys and doctor on a tagged instance', () => {
  const base = mkdtempSync(join(tmpdir(), 'olp-instance-cli-'));
  after(() => rmSync(base, { recursive: true, force: true }));
  const olp = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [OLP_BIN, ...args, '--state-dir', join(base, 'state')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: base, ...env },
    });

  it('a key made before the tag is named by doctor with the fix; one made after carries the tag, also when a later command is not given it', () => {
    const untagged = olp(['keys', 'add', 'mum']);
    assert.equal(untagged.status, 0, untagged.stderr);
    assert.match(untagged.stdout.trim(), /^olpk_[A-Za-z0-9_-]{43}$/);
    const tagged = olp(['keys', 'add', 'dad'], { OLP_INSTANCE_TAG: 'home1' });
    assert.equal(tagged.status, 0, tagged.stderr);
    assert.match(tagged.stdout.trim(), /^olpk_home1_[A-Za-z0-9_-]{43}$/);
    const list = olp(['keys', 'list']);
    assert.match(list.stdout, /olpk_home1_\S{4}…/);
    const doctor = olp(['doctor', '--port', '0', '--claude-bin', FAKE_CLAUDE, '--codex-bin', FAKE_CODEX], {
      OLP_INSTANCE_TAG: 'home1',
      OLP_PEERS: 'b2=http://10.0.0.3:8787',
    });
    assert.match(doctor.stdout, /instance {3}home1 \(keys made here carry it\); peers b2=http:\/\/10\.0\.0\.3:8787/);
    assert.match(
      doctor.stdout,
      /keys without the instance tag 'home1' \(mum\).*--untagged home1.*olp keys rotate NAME/,
    );
    // The state dir remembers the tag: later commands without it still mint it.
    const rotated = olp(['keys', 'rotate', 'mum']);
    assert.match(rotated.stdout.trim(), /^olpk_home1_/);
    const again = olp(['doctor', '--port', '0', '--claude-bin', FAKE_CLAUDE, '--codex-bin', FAKE_CODEX]);
    assert.match(again.stdout, /instance {3}home1 /);
    assert.doesNotMatch(again.stdout, /keys without the instance tag/);
  });
});

describe('a daemon started without its tag', () => {
  it('serves as the instance its state dir remembers: its /health and 421s name it', async () => {
    const first = await startTestDaemon({ config: { instanceTag: 'c3' } });
    await first.close(true);
    const again = await startTestDaemon({ base: first.base });
    try {
      const owner = again.daemon.store.keys.add('owner2', 'owner').token;
      assert.match(owner, /^olpk_c3_/);
      const health = (await (
        await fetch(`${again.url}/health`, { headers: { authorization: `Bearer ${owner}` } })
      ).json()) as {
        instance: { tag: string };
      };
      assert.equal(health.instance.tag, 'c3');
    } finally {
      await again.close();
    }
  });
});
