// `--member-logins required` as the official clients see it: a member key with no login of its own
// gets a 403 each SDK turns into its permission error (the openai client's PermissionDeniedError
// with code own_login_required, on chat and Responses, streamed or not; the Anthropic SDK's
// PermissionDeniedError of type permission_error), with the page's address to connect one; once the
// member has connected their own login (its API, as the page calls it), the same calls are answered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let member: string;
before(async () => {
  t = await startTestDaemon({ config: { memberLogins: 'required' } });
  member = t.daemon.store.keys.add('mia', 'member').token;
});
after(async () => t?.close());

const page = () => new RegExp(`connect yours on the usage page \\(${t.url.replace(/[.]/g, '\\.')}/olp`, 'i');

/** Asserts the call fails as the SDK's PermissionDeniedError, with olp's code and message. */
async function refused(
  call: Promise<unknown>,
  kind: typeof OpenAI.PermissionDeniedError | typeof Anthropic.PermissionDeniedError,
) {
  await assert.rejects(call, (e: InstanceType<typeof OpenAI.APIError> | InstanceType<typeof Anthropic.APIError>) => {
    assert.ok(e instanceof kind, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.status, 403);
    assert.match(e.message, page());
    return true;
  });
}

describe('--member-logins required through the official clients', () => {
  it('refuses a member on the machine’s login in each SDK’s own error, then serves them on their own', async () => {
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey: member, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.url, apiKey: member, maxRetries: 0 });
    const chat = { model: 'sonnet', messages: [{ role: 'user' as const, content: 'hi' }] };
    const msg = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };

    await refused(openai.chat.completions.create(chat), OpenAI.PermissionDeniedError);
    await assert.rejects(openai.chat.completions.create(chat), { code: 'own_login_required' });
    await refused(openai.chat.completions.create({ ...chat, stream: true }), OpenAI.PermissionDeniedError);
    await refused(openai.responses.create({ model: 'sonnet', input: 'hi' }), OpenAI.PermissionDeniedError);
    await refused(anthropic.messages.create(msg), Anthropic.PermissionDeniedError);
    await assert.rejects(anthropic.messages.create(msg), (e: InstanceType<typeof Anthropic.APIError>) => {
      assert.equal((e.error as { error?: { type?: string } }).error?.type, 'permission_error');
      return true;
    });
    // Counting tokens and listing models need no login: they still answer.
    assert.ok((await anthropic.messages.countTokens(msg)).input_tokens > 0);
    assert.ok((await openai.models.list()).data.length > 0);
    // The owner is never refused.
    const owner = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
    assert.ok((await owner.chat.completions.create(chat)).choices[0]!.message.content);

    const put = await fetch(`${t.url}/olp/me/login/claude`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${member}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: `sk-ant-oat01-mia-${'m'.repeat(24)}` }),
    });
    assert.equal(put.status, 200, await put.clone().text());
    assert.match((await openai.chat.completions.create(chat)).choices[0]!.message.content ?? '', /You said: hi/);
    const m = await anthropic.messages.create(msg);
    assert.equal(m.stop_reason, 'end_turn');
  });
});
