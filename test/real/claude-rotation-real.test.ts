// Long conversations on the real `claude` (pinned) across olp's session rotations, against the
// loopback stand-in with a context limit: it counts two characters a token, takes 90,000 and
// answers past that as Anthropic does (400 "prompt is too long"); claude compacts its session in
// its least auto-compact window (100,000). A rotated slot forks the CLI's own session, so a
// conversation the CLI carried stays answerable: before, the first re-sent transcript past the
// limit was refused (one exchange the CLI cannot compact) and so was every turn after it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon } from '../support/daemon.js';
import { runLongConversation } from '../support/long-conversation.js';
import { assertUnderstood } from '../support/real.js';
import { CLAUDE_CURRENT, REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';

describe(`real claude ${REAL_CLAUDE_VERSION}: a long conversation across rotations`, () => {
  // A process a turn (30 claude starts) on the baseline only: the current release's forks and
  // compaction are checked on live workers, to keep CI short.
  for (const workers of REAL_CLAUDE === CLAUDE_CURRENT ? [true] : [false, true]) {
    it(`30 turns of 8,000 characters with a turn cap of 8 are all answered (${workers ? 'live workers' : 'a process a turn'})`, async () => {
      assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
      const r = await runLongConversation({
        claudeBin: REAL_CLAUDE,
        turns: 30,
        turnCap: 8,
        userChars: 8000,
        charsPerToken: 2,
        limitTokens: 90_000,
        compactWindow: 100_000,
        contextOverflow: 'trim',
        workers,
      });
      assertUnderstood(r.logs);
      assert.deepEqual(r.failed, [], 'every turn answered');
      assert.equal(r.answered, 30);
      assert.deepEqual(r.rotations, ['turn_cap', 'turn_cap', 'turn_cap']);
      // The conversation (about 120,000 tokens) outgrew the limit: claude compacted its session
      // (one more request than turns) and the forks carried the compacted session on.
      assert.ok(r.requests > 30, `claude compacted (${r.requests} requests)`);
      assert.equal(r.refused, 0, 'nothing was sent past the limit');
      assert.equal(r.resent, 0, 'no rotation re-sent the transcript');
    });
  }

  it('a changed system prompt is not forked: the resumed session would keep the old one (2.1.332), the re-sent conversation has the new', async () => {
    const api = await startAnthropicStandIn();
    const t = await startTestDaemon({
      config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, sessionPool: 1 },
      claudeEnv: claudeStandInEnv(api.url),
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'OLD-SYSTEM-MARK' }];
      for (const [i, text] of ['remember PAPAYA', 'and GUAVA', 'which fruits?'].entries()) {
        if (i === 2) messages[0] = { role: 'system', content: 'NEW-SYSTEM-MARK' };
        messages.push({ role: 'user', content: text });
        const res = await client.chat.completions.create({ model: 'sonnet', messages });
        messages.push({ role: 'assistant', content: res.choices[0]!.message.content! });
      }
      const rotations = t.logs.filter((l) => l.event === 'request').map((l) => l.rotation ?? null);
      assert.deepEqual(rotations, ['initial', null, 'system_changed']);
      const last = api.requests.filter((r) => r.path === '/v1/messages' && r.body.stream).at(-1)!;
      assert.match(JSON.stringify(last.body.system), /NEW-SYSTEM-MARK/);
      assert.doesNotMatch(JSON.stringify(last.body.system), /OLD-SYSTEM-MARK/);
      const sent = JSON.stringify(last.body.messages);
      assert.match(
        sent,
        /<conversation>[\s\S]*remember PAPAYA[\s\S]*and GUAVA[\s\S]*which fruits\?/,
        'the whole conversation, re-sent',
      );
      assertUnderstood(t.logs);
    } finally {
      await t.close();
      await api.close();
    }
  });
});
