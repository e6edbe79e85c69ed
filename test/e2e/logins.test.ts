// Logins: each key's runs get its own login's credential and no other (cold, resumed, warm,
// parked, spares; claude and codex), its plan window is its own, and a removed login stops its
// keys' CLIs and refuses their requests with the fix.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { loginPaths, removeLoginFiles, saveClaudeToken, writeSecret } from '../../src/logins/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { fakeCliProcesses, isAlive, leftoverWorkspaces, readRecord, recordedPids } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

interface Seen {
  oauthToken: string | null;
  anthropicKey: string | null;
  claudeFile: string | null;
  codexAuth: string | null;
  codexKey: string | null;
}

const MACHINE_CLAUDE = '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-machine"}}';
const MACHINE_CODEX = '{"OPENAI_API_KEY":"sk-machine"}';

/** Adds login `name` with a claude setup token and a codex API-key login, as `olp logins add` leaves them. */
function addLogin(t: TestDaemon, name: string): { token: string; codexAuth: string } {
  const token = `sk-ant-oat01-${name}-${'x'.repeat(20)}`;
  saveClaudeToken(t.stateDir, name, token);
  t.daemon.store.logins.set(name, 'claude', 'setup-token');
  const codexAuth = `{"OPENAI_API_KEY":"sk-${name}"}`;
  writeSecret(loginPaths(t.stateDir, name).codexAuth, codexAuth);
  t.daemon.store.logins.set(name, 'codex', 'api-key');
  return { token, codexAuth };
}

/** Every fake CLI run so far: the key it ran for (from its workspace path), its backend, and the credential it saw. */
function runs(t: TestDaemon, keyIds: ReadonlyMap<string, string>) {
  const out: { key: string; backend: string; live: boolean; seen: Seen }[] = [];
  for (const f of readdirSync(t.recordDir)) {
    if (!f.endsWith('.json')) continue;
    let r: { cwd: string; backend?: string; live?: boolean; credential: Seen };
    try {
      r = JSON.parse(readFileSync(join(t.recordDir, f), 'utf8'));
    } catch {
      continue; // being rewritten
    }
    const key = [...keyIds].find(([id]) => r.cwd.includes(`/${id}/`))?.[1] ?? 'unknown';
    out.push({ key, backend: r.backend ?? 'claude', live: r.live === true, seen: r.credential });
  }
  return out;
}

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  },
];

/** A conversation of a key: two plain turns, then one tool round trip (parked) and its answer. */
async function conversation(client: OpenAI, model: string, i: number): Promise<void> {
  const messages: Msg[] = [{ role: 'user', content: `hello ${i}` }];
  const a = await client.chat.completions.create({ model, messages });
  messages.push({ role: 'assistant', content: a.choices[0]!.message.content! });
  messages.push({ role: 'user', content: `and again ${i}` });
  const b = await client.chat.completions.create({ model, messages });
  messages.push({ role: 'assistant', content: b.choices[0]!.message.content! });
  messages.push({ role: 'user', content: `look it up [[fake-tools:[{"name":"lookup","arguments":{"q":"x${i}"}}]]]` });
  const c = await client.chat.completions.create({ model, messages, tools });
  assert.equal(c.choices[0]!.finish_reason, 'tool_calls');
  const call = c.choices[0]!.message.tool_calls![0]!;
  messages.push(c.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'found it' });
  const d = await client.chat.completions.create({ model, messages, tools });
  assert.equal(d.choices[0]!.finish_reason, 'stop');
}

/** The credential each run of the fake CLIs saw, oldest first. */
function seenInOrder(t: TestDaemon): Seen[] {
  return recordedPids(t.recordDir).runs.map(
    (pid) => (readRecord(t.recordDir, pid) as unknown as { credential: Seen }).credential,
  );
}

describe('logins', () => {
  it("two logins, three keys, concurrent conversations on both CLIs: every run sees only its key's login", async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      mkdirSync(join(t.operatorHome, '.claude'), { recursive: true });
      writeFileSync(join(t.operatorHome, '.claude', '.credentials.json'), MACHINE_CLAUDE);
      mkdirSync(join(t.operatorHome, '.codex'), { recursive: true });
      writeFileSync(join(t.operatorHome, '.codex', 'auth.json'), MACHINE_CODEX);
      const alice = addLogin(t, 'alice');
      const bob = addLogin(t, 'bob');
      const keys = t.daemon.store.keys;
      const a = keys.add('alice', 'member', {}, 'alice');
      const b = keys.add('bob', 'member', {}, 'bob');
      const ids = new Map([
        [a.key.id, 'alice'],
        [b.key.id, 'bob'],
        [keys.get('tester')!.id, 'machine'],
      ]);
      const clients = {
        alice: new OpenAI({ baseURL: t.baseURL, apiKey: a.token, maxRetries: 0 }),
        bob: new OpenAI({ baseURL: t.baseURL, apiKey: b.token, maxRetries: 0 }),
        machine: new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 }),
      };
      const work: Promise<void>[] = [];
      for (const [name, client] of Object.entries(clients))
        for (let i = 0; i < 2; i++)
          for (const model of ['sonnet', 'codex'])
            work.push(conversation(client, model, i + (name === 'bob' ? 10 : 0)));
      await Promise.all(work);
      // Spares and codex app-servers start after a turn, off the response path: let them come up.
      await new Promise((r) => setTimeout(r, 300));

      const all = runs(t, ids);
      const want: Record<string, Record<string, Partial<Seen>>> = {
        alice: {
          claude: { oauthToken: alice.token, claudeFile: null, anthropicKey: null },
          codex: { codexAuth: alice.codexAuth, codexKey: null },
        },
        bob: {
          claude: { oauthToken: bob.token, claudeFile: null, anthropicKey: null },
          codex: { codexAuth: bob.codexAuth, codexKey: null },
        },
        machine: { claude: { oauthToken: null, claudeFile: MACHINE_CLAUDE }, codex: { codexAuth: MACHINE_CODEX } },
      };
      const counts: Record<string, number> = {};
      for (const r of all) {
        assert.notEqual(r.key, 'unknown', 'every run belongs to a key');
        const expected = want[r.key]![r.backend]!;
        for (const [field, value] of Object.entries(expected))
          assert.equal(r.seen[field as keyof Seen], value, `${r.key}'s ${r.backend} run saw ${field}`);
        const id = `${r.key}/${r.backend}${r.live ? '/live' : ''}`;
        counts[id] = (counts[id] ?? 0) + 1;
      }
      // Each key: 2 conversations on each CLI; codex adds an app-server per conversation.
      for (const key of ['alice', 'bob', 'machine']) {
        assert.ok((counts[`${key}/claude`] ?? 0) >= 2, `${key}: claude runs ${JSON.stringify(counts)}`);
        assert.ok((counts[`${key}/codex`] ?? 0) >= 2, `${key}: codex exec runs ${JSON.stringify(counts)}`);
        assert.ok((counts[`${key}/codex/live`] ?? 0) >= 1, `${key}: codex app-servers ${JSON.stringify(counts)}`);
      }
      console.log(`runs by key and CLI: ${JSON.stringify(counts)}`);

      // The ledger says which login served each turn.
      await new Promise((r) => setTimeout(r, 50));
      const rows = [...t.daemon.store.usage.export({ scope: { all: true } })];
      for (const r of rows) assert.equal(r.login, r.key_name === 'tester' ? null : r.key_name);
      assert.equal(rows.length, 3 * 2 * 2 * 4);
      // `olp usage --by login`: each login's share.
      const byLogin = t.daemon.store.usage.summarize({ scope: { all: true } }, 'login');
      assert.deepEqual(
        byLogin.map((g) => [g.group, g.requests]),
        [
          ['alice', 16],
          ['bob', 16],
          ['machine', 16],
        ],
      );
    } finally {
      await t.close();
    }
    assert.equal(fakeCliProcesses(t.recordDir).length, 0, 'no CLI left running');
  });

  it("a login's spent plan window refuses only its keys; the others' CLIs still run", async () => {
    const t = await startTestDaemon();
    try {
      addLogin(t, 'alice');
      addLogin(t, 'bob');
      const a = t.daemon.store.keys.add('alice', 'member', {}, 'alice').token;
      const b = t.daemon.store.keys.add('bob', 'member', {}, 'bob').token;
      const ask = (token: string, content: string) =>
        fetch(`${t.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content }] }),
        });
      const spent = await ask(a, 'hello [[fake:plan-spent]]');
      assert.equal(spent.status, 429);
      const body = (await spent.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'plan_limit_reached');
      const before = readdirSync(t.recordDir).length;
      const again = await ask(a, 'hello again');
      assert.equal(again.status, 429, "alice's window is spent: refused without a CLI");
      assert.match(
        ((await again.json()) as { error: { message: string } }).error.message,
        /The claude \(login alice\) login's plan limit is reached/,
      );
      assert.equal(readdirSync(t.recordDir).length, before);
      const bobs = await ask(b, 'hello');
      assert.equal(bobs.status, 200, "bob's login has its own window");
      assert.equal(bobs.headers.get('x-olp-plan-status'), null, "alice's plan headers are not bob's");
      const machine = await ask(t.token, 'hello');
      assert.equal(machine.status, 200);
      const me = (await (await fetch(`${t.url}/olp/me`, { headers: { authorization: `Bearer ${b}` } })).json()) as {
        plan: Record<string, unknown>;
      };
      assert.deepEqual(me.plan, {}, "bob's /olp/me shows his login's windows only");
      const mine = (await (await fetch(`${t.url}/olp/me`, { headers: { authorization: `Bearer ${a}` } })).json()) as {
        plan: Record<string, { status: string }>;
      };
      assert.equal(mine.plan.claude?.status, 'rejected');
    } finally {
      await t.close();
    }
  });

  it("removing a login stops its keys' live CLIs and answers them 503 with the fix; a login without a CLI's credential is refused for that CLI", async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      addLogin(t, 'bob');
      const b = t.daemon.store.keys.add('bob', 'member', {}, 'bob');
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: b.token, maxRetries: 0 });
      await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
      const held = () => fakeCliProcesses(t.recordDir);
      await waitFor(() => held().length > 0);
      const pids = held();
      // Bob's key is known to be in good standing (the standing watch looks every 250 ms) before
      // the login goes: its removal alone must make olp look again.
      await new Promise((r) => setTimeout(r, 400));

      // As `olp logins remove bob` does it, from another process or this one.
      t.daemon.store.logins.remove('bob');
      removeLoginFiles(t.stateDir, 'bob');
      await waitFor(() => pids.every((p) => !isAlive(p)));
      assert.ok(t.logs.some((l) => l.event === 'key_clis_retired' && l.reason === 'login removed'));
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi again' }] }),
      });
      assert.equal(res.status, 503);
      const err = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(err.error.code, 'login_not_set_up');
      assert.match(err.error.message, /login 'bob', which olp no longer has.*olp logins add bob --claude/);

      // A login with claude only: its keys' codex requests are refused, naming the fix.
      saveClaudeToken(t.stateDir, 'carol', `sk-ant-oat01-carol-${'y'.repeat(20)}`);
      t.daemon.store.logins.set('carol', 'claude', 'setup-token');
      const c = t.daemon.store.keys.add('carol', 'member', {}, 'carol').token;
      const codex = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'codex', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(codex.status, 503);
      assert.match(
        ((await codex.json()) as { error: { message: string } }).error.message,
        /olp logins add carol --codex/,
      );
    } finally {
      await t.close();
    }
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });

  it("a rotated token retires the login's live CLIs: the next turn starts a CLI with the new one", async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      const { token: old } = addLogin(t, 'alice');
      const a = t.daemon.store.keys.add('alice', 'member', {}, 'alice');
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: a.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'user', content: 'hi' }];
      const first = await client.chat.completions.create({ model: 'sonnet', messages });
      messages.push(
        { role: 'assistant', content: first.choices[0]!.message.content! },
        { role: 'user', content: 'more' },
      );
      // As `olp logins rotate alice --claude` does it.
      const fresh = `sk-ant-oat01-alice-rotated-${'z'.repeat(12)}`;
      saveClaudeToken(t.stateDir, 'alice', fresh);
      t.daemon.store.logins.set('alice', 'claude', 'setup-token');
      await client.chat.completions.create({ model: 'sonnet', messages });
      // The CLIs that ran the two turns (spares, started in between, are logged otherwise).
      const turns = t.logs.filter((l) => l.event === 'spawned').map((l) => Number(l.pid));
      assert.equal(turns.length, 2, 'the warm worker holding the old token did not take the second turn');
      const seen = (pid: number) => (readRecord(t.recordDir, pid) as unknown as { credential: Seen }).credential;
      assert.equal(seen(turns[0]!).oauthToken, old);
      assert.equal(seen(turns[1]!).oauthToken, fresh, 'the second turn ran in a CLI holding the new token');
    } finally {
      await t.close();
    }
  });

  it("a fallback chain goes on to a CLI the login has, never to the machine's login", async () => {
    const t = await startTestDaemon({ config: { fallbacks: { codex: ['sonnet'] } } });
    try {
      saveClaudeToken(t.stateDir, 'carol', `sk-ant-oat01-carol-${'y'.repeat(20)}`);
      t.daemon.store.logins.set('carol', 'claude', 'setup-token');
      const c = t.daemon.store.keys.add('carol', 'member', {}, 'carol').token;
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'codex', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200, 'carol has no codex credential: her claude answers');
      const body = (await res.json()) as { model: string };
      assert.equal(body.model, 'sonnet');
      const seen = seenInOrder(t);
      assert.equal(seen.length, 1, 'no codex was started for her');
      assert.equal(seen[0]!.oauthToken, `sk-ant-oat01-carol-${'y'.repeat(20)}`);
    } finally {
      await t.close();
    }
  });
});
