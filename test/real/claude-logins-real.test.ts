// Logins on the real `claude` binary (pinned devDependency) against a loopback stand-in for the
// Anthropic Messages API that records the credential of every request: two keys bound to two
// logins (each a setup token, given to claude as CLAUDE_CODE_OAUTH_TOKEN) and the machine's key
// (an API key in olp's claude environment) talk at once, with live workers (a cold turn, then a
// warm one) and a tool round trip (a parked turn); every API request of a key's turns carries
// its login's credential and no other.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { saveClaudeToken } from '../../src/logins/index.js';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';

const present = existsSync(REAL_CLAUDE);
let api: StandIn;
let t: TestDaemon;

const tmpBefore = claudeTmp();
before(async () => {
  if (!present) return;
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true },
    // The machine's own login: an API key in olp's claude environment.
    claudeEnv: claudeStandInEnv(api.url),
  });
});
after(async () => {
  if (!present) return;
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

const MACHINE_KEY = claudeStandInEnv('').ANTHROPIC_API_KEY!;

const LOOKUP: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'Looks a word up',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
};

/**
 * One conversation of a key, every user turn marked with its name: a cold turn, a warm one (the
 * live worker), then a call of the client's function (the turn parks) and its result's answer.
 */
async function conversation(client: OpenAI, name: string): Promise<void> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `[${name}] first words` }];
  const a = await client.chat.completions.create({ model: 'sonnet', messages });
  assert.equal(a.choices[0]!.message.content, `stand-in heard: [${name}] first words`);
  messages.push({ role: 'assistant', content: a.choices[0]!.message.content! });
  messages.push({ role: 'user', content: `[${name}] second words` });
  const b = await client.chat.completions.create({ model: 'sonnet', messages });
  assert.equal(b.choices[0]!.message.content, `stand-in heard: [${name}] second words`);
  messages.push({ role: 'assistant', content: b.choices[0]!.message.content! });
  messages.push({ role: 'user', content: `[${name}] look it up` });
  const c = await client.chat.completions.create({ model: 'sonnet', messages, tools: [LOOKUP] });
  assert.equal(c.choices[0]!.finish_reason, 'tool_calls', `${name}: ${JSON.stringify(c.choices[0])}`);
  const call = c.choices[0]!.message.tool_calls!.find((x) => x.type === 'function')!;
  messages.push(c.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: `found for ${name}` });
  const d = await client.chat.completions.create({ model: 'sonnet', messages, tools: [LOOKUP] });
  assert.equal(d.choices[0]!.message.content, `echo: found for ${name}`);
}

/** A key's second conversation: its first turn (on the key's spare), then a warm one. */
async function secondConversation(client: OpenAI, name: string): Promise<void> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `[${name}] new chat` }];
  const a = await client.chat.completions.create({ model: 'sonnet', messages });
  assert.equal(a.choices[0]!.message.content, `stand-in heard: [${name}] new chat`);
  messages.push({ role: 'assistant', content: a.choices[0]!.message.content! });
  messages.push({ role: 'user', content: `[${name}] more words` });
  const b = await client.chat.completions.create({ model: 'sonnet', messages });
  assert.equal(b.choices[0]!.message.content, `stand-in heard: [${name}] more words`);
}

/** Waits until each key has a spare claude up (the live CLIs /health lists, by their slot's key). */
async function sparesUp(keyIds: readonly string[], ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
    const live = ((await res.json()) as { workers: { live: { state: string; slot: string }[] } }).workers.live;
    const spares = live.filter((w) => w.state === 'spare');
    if (keyIds.every((id) => spares.some((w) => w.slot.startsWith(`${id}/claude/`)))) break;
    if (Date.now() > end) throw new Error(`no spare for every key: ${JSON.stringify(live)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 1500)); // let them settle (their ping answered), as a client's pause would
}

/** The key a request was made for: the `[name]` marker of its conversation's user turns (none: unknown). */
function markerOf(body: unknown, names: readonly string[]): string {
  const text = JSON.stringify(body);
  const found = names.filter((n) => text.includes(`[${n}]`));
  return found.length === 1 ? found[0]! : found.length === 0 ? 'unmarked' : `mixed:${found.join(',')}`;
}

describe(`real claude ${REAL_CLAUDE_VERSION} with logins`, { skip: !present && `no claude at ${REAL_CLAUDE}` }, () => {
  it("two logins and the machine's key at once, live workers and a parked turn: each key's API requests carry only its login's credential", async () => {
    const tokens = { alice: `sk-ant-oat01-alice-${'a'.repeat(24)}`, bob: `sk-ant-oat01-bob-${'b'.repeat(24)}` };
    for (const [name, token] of Object.entries(tokens)) {
      saveClaudeToken(t.stateDir, name, token);
      t.daemon.store.logins.set(name, 'claude', 'setup-token');
    }
    const a = t.daemon.store.keys.add('alice', 'member', {}, 'alice');
    const b = t.daemon.store.keys.add('bob', 'member', {}, 'bob');
    const keys = { alice: a.token, bob: b.token, machine: t.token };
    const expected: Record<string, string> = { alice: tokens.alice, bob: tokens.bob, machine: MACHINE_KEY };
    const names = Object.keys(keys);
    api.toolCalls = [{ name: 'lookup', input: { q: 'olp' } }];
    try {
      await Promise.all(
        Object.entries(keys).map(([name, key]) =>
          conversation(new OpenAI({ baseURL: t.baseURL, apiKey: key, maxRetries: 0 }), name),
        ),
      );
      // Each key's next new conversation goes to a spare started with its login's credential.
      await sparesUp([a.key.id, b.key.id, t.daemon.store.keys.get('tester')!.id]);
      await Promise.all(
        Object.entries(keys).map(([name, key]) =>
          secondConversation(new OpenAI({ baseURL: t.baseURL, apiKey: key, maxRetries: 0 }), name),
        ),
      );
    } finally {
      api.toolCalls = undefined;
    }

    // Match each API request to its key by the marker, then check the credential it carried.
    const byToken: Record<string, number> = {};
    const byKey: Record<string, number> = {};
    for (const r of api.requests) {
      const key = markerOf(r.body, names);
      assert.ok(names.includes(key), `a request for one key: ${key} ${r.path} ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.equal(r.credential, expected[key], `${key}'s request to ${r.path} carried ${key}'s credential`);
      byToken[r.credential!] = (byToken[r.credential!] ?? 0) + 1;
      byKey[key] = (byKey[key] ?? 0) + 1;
    }
    assert.deepEqual(
      Object.keys(byToken).sort(),
      Object.values(expected).sort(),
      'no credential but the three expected',
    );
    // Each key: a cold turn, a warm turn, the tool call and its answer, then a prestarted turn and
    // a warm one: one streamed request each.
    const streamed = (key: string) =>
      api.requests.filter((r) => r.body.stream && r.path === '/v1/messages' && markerOf(r.body, names) === key).length;
    for (const name of names) {
      assert.equal(byToken[expected[name]!], byKey[name], `${name}: requests with its credential = its requests`);
      assert.equal(streamed(name), 6, `${name}: 6 model calls for its 6 turns`);
    }
    const runs: Record<string, string[]> = {};
    for (const l of t.logs)
      if (l.event === 'request' && l.path === '/v1/chat/completions')
        (runs[String(l.key === 'tester' ? 'machine' : l.key)] ??= []).push(String(l.run ?? '-'));
    for (const name of names) {
      assert.equal(runs[name]![1], 'warm', `${name}'s second turn went to its live worker: ${runs[name]}`);
      assert.equal(runs[name]![4], 'prestarted', `${name}'s second conversation went to its spare: ${runs[name]}`);
      assert.equal(runs[name]![5], 'warm', `${name}'s second conversation went on in its worker: ${runs[name]}`);
    }
    console.log(
      `claude ${REAL_CLAUDE_VERSION} logins: API requests by key ${JSON.stringify(byKey)}, by credential ${JSON.stringify(
        Object.fromEntries(names.map((n) => [n, byToken[expected[n]!]])),
      )}, runs ${JSON.stringify(runs)}`,
    );
  });
});
