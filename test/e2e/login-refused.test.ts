// A member's own login that its provider refuses: the error names that login and its fix (not the
// machine's `claude auth login`), with one status on every wire format, and the usage page's JSON
// shows the refusal until the login is renewed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { loginPaths, saveClaudeToken, writeSecret } from '../../src/logins/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

const REVOKED_CLAUDE = `sk-ant-oat01-revoked-bob-${'x'.repeat(20)}`;
const GOOD_CLAUDE = `sk-ant-oat01-bob-${'y'.repeat(20)}`;

/** The error a client got, whatever the SDK. */
async function failure(p: Promise<unknown>): Promise<{ status: number; message: string; code?: string }> {
  try {
    await p;
  } catch (e) {
    // openai's `error` is the envelope's error; Anthropic's the whole envelope.
    const err = e as { status: number; code?: string; error?: { message?: string; error?: { message?: string } } };
    return { status: err.status, message: err.error?.error?.message ?? err.error?.message ?? '', code: err.code };
  }
  assert.fail('the request succeeded');
}

describe("a member's refused login", () => {
  let t: TestDaemon;
  let member: string;
  let owner: string;
  before(async () => {
    t = await startTestDaemon();
    saveClaudeToken(t.stateDir, 'bob', REVOKED_CLAUDE);
    t.daemon.store.logins.set('bob', 'claude', 'setup-token');
    writeSecret(loginPaths(t.stateDir, 'bob').codexAuth, '{"OPENAI_API_KEY":"sk-revoked-bob"}');
    t.daemon.store.logins.set('bob', 'codex', 'api-key');
    member = t.daemon.store.keys.add('bob', 'member', {}, 'bob').token;
    owner = t.daemon.store.keys.add('bobs-admin', 'owner', {}, 'bob').token;
  });
  after(() => t.close());

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: t.baseURL, maxRetries: 0 });
  const anthropic = (key: string, url = t.url) => new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
  const hi = [{ role: 'user' as const, content: 'hi' }];

  it('tells a member whose login it is and who renews it, with 503 on every wire format', async () => {
    const chat = await failure(openai(member).chat.completions.create({ model: 'sonnet', messages: hi }));
    assert.equal(chat.status, 503);
    assert.equal(chat.code, 'login_refused');
    assert.match(chat.message, /^Your claude login 'bob' was refused by Anthropic \(401: Invalid API key/);
    assert.match(chat.message, /Ask the owner of this olp to renew it \(`olp logins rotate bob --claude`\)/);
    assert.doesNotMatch(chat.message, /claude auth login|On the machine running olp/);
    const responses = await failure(openai(member).responses.create({ model: 'sonnet', input: 'hi' }));
    assert.equal(responses.status, 503);
    assert.equal(responses.message, chat.message);
    const messages = await failure(
      anthropic(member).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: hi }),
    );
    assert.equal(messages.status, 503);
    assert.equal(messages.message, chat.message);
    const codex = await failure(openai(member).chat.completions.create({ model: 'codex', messages: hi }));
    assert.equal(codex.status, 503);
    assert.match(codex.message, /^Your codex login 'bob' was refused by OpenAI \(.*401 Unauthorized/);
    assert.match(codex.message, /`olp logins rotate bob --codex`/);
  });

  it('gives an owner the command, streamed or not, and never asks for a retry', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: hi, stream: true }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    const body = (await res.json()) as { error: { message: string; code: string } };
    assert.equal(body.error.code, 'login_refused');
    assert.match(
      body.error.message,
      /^bob's claude login was refused by Anthropic \(401: .*\): renew it with `olp logins rotate bob --claude`\.$/,
    );
  });

  it('shows the refusal on the page until the login is renewed and answers', async () => {
    const get = async (path: string, key: string) =>
      (await (await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<
        string,
        unknown
      >;
    const mine = (await get('/olp/me/usage', member)) as { login: string; login_refused?: Record<string, unknown> };
    assert.equal(mine.login, 'bob');
    assert.deepEqual(Object.keys(mine.login_refused ?? {}).sort(), ['claude', 'codex']);
    assert.match(String((mine.login_refused!.claude as { detail: string }).detail), /401/);
    const all = (await get('/olp/usage', t.token)) as { keys: { name: string; login_refused?: object }[] };
    assert.ok(all.keys.find((k) => k.name === 'bob')?.login_refused);
    assert.equal(all.keys.find((k) => k.name === 'tester')?.login_refused, undefined);
    // Renewed (as `olp logins rotate bob --claude` stores it): claude's refusal is gone, codex's stays.
    saveClaudeToken(t.stateDir, 'bob', GOOD_CLAUDE);
    t.daemon.store.logins.set('bob', 'claude', 'setup-token');
    const ok = await openai(member).chat.completions.create({ model: 'sonnet', messages: hi });
    assert.equal(ok.choices[0]!.finish_reason, 'stop');
    const after = (await get('/olp/me', member)) as { login_refused?: Record<string, unknown> };
    assert.deepEqual(Object.keys(after.login_refused ?? {}), ['codex']);
  });

  it("keeps the machine's wording for a key on the machine's login", async () => {
    const t2 = await startTestDaemon({ claudeEnv: { FAKE_CLAUDE_SCENARIO: 'not-logged-in' } });
    try {
      const e = await failure(
        anthropic(t2.token, t2.url).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: hi }),
      );
      assert.equal(e.status, 503);
      assert.match(e.message, /^The claude CLI is not logged in .*On the machine running olp/);
      const chat = await failure(
        new OpenAI({ apiKey: t2.token, baseURL: t2.baseURL, maxRetries: 0 }).chat.completions.create({
          model: 'sonnet',
          messages: hi,
        }),
      );
      assert.equal(chat.status, 503);
      assert.equal(chat.code, 'backend_not_logged_in');
    } finally {
      await t2.close();
    }
  });
});
