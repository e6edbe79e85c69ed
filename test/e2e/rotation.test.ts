// Rotated session slots keep long conversations answerable (fake claude that counts tokens,
// enforces a limit and compacts its sessions like the real one): a rotation past the turn cap forks
// the CLI's own session instead of re-sending the transcript, and a rotation that must re-send it
// is held to the token rate the provider's own counts showed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { listTree } from '../support/paths.js';
import { readRecord, recordedPids, type RunRecord } from '../support/procs.js';

type Msg = OpenAI.ChatCompletionMessageParam;
type Run = RunRecord & { forkOf?: string; inputTokens?: number; stage?: string };

/** One request: its reply (or error code), the session mode, and the fake's record of its run(s). */
async function send(t: TestDaemon, client: OpenAI, messages: Msg[]) {
  const before = new Set(recordedPids(t.recordDir).runs);
  try {
    const { data, response } = await client.chat.completions.create({ model: 'sonnet', messages }).withResponse();
    return {
      reply: data.choices[0]!.message.content!,
      error: undefined,
      mode: response.headers.get('x-olp-session-mode'),
      runs: newRuns(t, before),
    };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { reply: undefined, error: err, mode: null, runs: newRuns(t, before) };
  }
}

function newRuns(t: TestDaemon, before: Set<number>): Run[] {
  return recordedPids(t.recordDir)
    .runs.filter((p) => !before.has(p))
    .map((p) => readRecord(t.recordDir, p) as Run);
}

/** The rotation reasons of the daemon's requests so far, in order. */
function rotations(t: TestDaemon): (string | null)[] {
  return t.logs
    .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
    .map((l) => (l.rotation as string | undefined) ?? null);
}

/** The session files (.jsonl) in a key's claude slots. */
function sessionFiles(t: TestDaemon): string[] {
  const slots = join(t.stateDir, 'slots');
  return listTree(slots)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) =>
      f
        .split('/')
        .pop()!
        .replace(/\.jsonl$/, ''),
    );
}

const words = (n: number, tag: string) =>
  `${tag} ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27))}`.slice(0, n);

describe('session rotation', () => {
  it('past the turn cap the slot forks the CLI’s session: only the new turn is sent, the history stays, the old files go', async () => {
    const t = await startTestDaemon({ config: { sessionPool: 1, sessionTurnCap: 3 } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'system', content: 'Be brief.' }];
      const ids: string[] = [];
      for (let i = 1; i <= 7; i++) {
        messages.push({ role: 'user', content: `question number ${i}` });
        const r = await send(t, client, messages);
        assert.ok(r.reply, `turn ${i} answered: ${r.error?.message}`);
        assert.equal(r.runs.length, 1);
        const run = r.runs[0]!;
        ids.push(run.sessionId!);
        if (i === 4 || i === 7) {
          // The cap's rotation: a new session id, the old session's history, only the new turn sent.
          assert.equal(r.mode, 'fresh');
          assert.equal(run.forkOf, ids[i - 2], 'forked from the slot’s session');
          assert.ok(run.argv.includes('--fork-session'));
          assert.notEqual(run.sessionId, ids[i - 2]);
          assert.equal(run.historyTurns, i - 1, 'the CLI carried the whole history');
          assert.equal(run.stdin, `question number ${i}`, 'no re-rendered transcript');
        } else if (i > 1) assert.equal(r.mode, 'resumed');
        messages.push({ role: 'assistant', content: r.reply });
      }
      assert.deepEqual(rotations(t), ['initial', null, null, 'turn_cap', null, null, 'turn_cap']);
      // The forked-from sessions' files are deleted once the fork has read them.
      const deadline = Date.now() + 5000;
      while (sessionFiles(t).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(sessionFiles(t), [ids[6]]);
    } finally {
      await t.close();
    }
  });

  it('codex forks its thread past the turn cap: the history and the usage go on, the old rollout stays for the fork to read', async () => {
    const t = await startTestDaemon({ config: { sessionPool: 1, sessionTurnCap: 2 } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [];
      const usage: number[] = [];
      for (let i = 1; i <= 6; i++) {
        messages.push({ role: 'user', content: `codex question ${i}` });
        const before = new Set(recordedPids(t.recordDir).runs);
        const res = await client.chat.completions.create({ model: 'codex', messages });
        const run = newRuns(t, before).at(-1)!;
        usage.push(res.usage!.prompt_tokens);
        if (i === 3 || i === 5) {
          assert.ok(run.forkOf, `turn ${i} forked`);
          assert.equal(run.historyTurns, i - 1);
          assert.equal(run.stdin, `codex question ${i}`);
        }
        messages.push({ role: 'assistant', content: res.choices[0]!.message.content! });
      }
      // Each turn's own usage (the fake's: 100 + a quarter of the prompt's bytes), not the thread's
      // running total that the fork carried on.
      assert.deepEqual(usage, Array(6).fill(104));
      assert.deepEqual(rotations(t), ['initial', null, 'turn_cap', null, 'turn_cap', null]);
    } finally {
      await t.close();
    }
  });

  it('a long conversation stays answerable across rotations: the CLI compacts its session and the forks keep it', async () => {
    // The provider counts two characters a token and takes 3,000; the CLI compacts past 2,000.
    const t = await startTestDaemon({
      config: { sessionPool: 1, sessionTurnCap: 4, contextTokens: { claude: 3000 }, contextOverflow: 'trim' },
      claudeEnv: { FAKE_CLAUDE_CHARS_PER_TOKEN: '2', FAKE_CLAUDE_TOKEN_LIMIT: '3000', FAKE_CLAUDE_COMPACT_AT: '2000' },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [];
      let answered = 0;
      let compacted = 0;
      for (let i = 1; i <= 16; i++) {
        messages.push({ role: 'user', content: words(1000, `turn ${i}`) });
        const r = await send(t, client, messages);
        if (r.reply) answered++;
        compacted += r.runs.filter((x) => x.historyTurns === 1 && i > 2).length;
        messages.push({ role: 'assistant', content: r.reply ?? 'no answer' });
      }
      assert.equal(answered, 16, `all 16 turns answered (rotations: ${rotations(t).join(',')})`);
      assert.ok(compacted > 0, 'the CLI compacted its session');
      assert.ok(rotations(t).filter((x) => x === 'turn_cap').length >= 3);
    } finally {
      await t.close();
    }
  });

  it('a rotation that re-sends the conversation trims it at the rate the provider counted, to a margin under the window', async () => {
    // The provider counts two characters a token (olp assumes four) and takes 16,000; the CLI
    // compacts past 14,000. contextOverflow trim, the model's budget 16,000.
    const t = await startTestDaemon({
      config: { sessionPool: 1, contextTokens: { claude: 16_000 }, contextOverflow: 'trim' },
      claudeEnv: {
        FAKE_CLAUDE_CHARS_PER_TOKEN: '2',
        FAKE_CLAUDE_TOKEN_LIMIT: '16000',
        FAKE_CLAUDE_COMPACT_AT: '14000',
      },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [];
      for (let i = 1; i <= 5; i++) {
        messages.push({ role: 'user', content: words(6000, `turn ${i}`) });
        const r = await send(t, client, messages);
        assert.ok(r.reply, `turn ${i}: ${r.error?.message}`);
        messages.push({ role: 'assistant', content: r.reply });
      }
      // A failed turn: the slot's session is no longer known, so the next turn re-sends the conversation.
      const failed = await send(t, client, [...messages, { role: 'user', content: '[[fake:rate-limited]] go on' }]);
      assert.ok(failed.error);
      messages.push({ role: 'user', content: words(6000, 'turn 6') });
      const r = await send(t, client, messages);
      assert.ok(r.reply, `the re-sent turn was answered: ${r.error?.message}`);
      assert.equal(rotations(t).at(-1), 'failed');
      const run = r.runs.at(-1)!;
      assert.match(run.stdin ?? '', /earliest turn\(s\) of this conversation were left out/);
      // Within 75 % of the budget by the provider's count (olp's own estimate of the whole
      // conversation, at four characters a token, was under the budget: it would not have trimmed).
      assert.ok(run.inputTokens! <= 12_000, `sent ${run.inputTokens} tokens`);
      const chars = messages.reduce((n, m) => n + String(m.content).length, 0);
      assert.ok(
        chars / 4 < 16_000 && chars / 2 > 16_000,
        `the whole conversation (${chars} characters) is what the estimate gets wrong`,
      );
      // The trimmed conversation is still the conversation: its next turn resumes the session.
      messages.push({ role: 'assistant', content: r.reply }, { role: 'user', content: 'and then?' });
      const next = await send(t, client, messages);
      assert.equal(next.mode, 'resumed', next.error?.message);
      assert.equal(next.runs.at(-1)?.stdin, 'and then?');
    } finally {
      await t.close();
    }
  });

  it('a conversation trimmed once still resumes its session on the next turn, however far the next one would be trimmed', async () => {
    const t = await startTestDaemon({
      config: { sessionPool: 1, contextTokens: { claude: 1000 }, contextOverflow: 'trim' },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [
        { role: 'user', content: words(2000, 'one') },
        { role: 'assistant', content: 'noted one' },
        { role: 'user', content: words(2000, 'two') },
        { role: 'assistant', content: 'noted two' },
        { role: 'user', content: 'three' },
      ];
      const first = await send(t, client, messages);
      assert.match(first.runs[0]!.stdin ?? '', /left out to fit/);
      messages.push({ role: 'assistant', content: first.reply! }, { role: 'user', content: words(2000, 'four') });
      const next = await send(t, client, messages);
      assert.equal(next.mode, 'resumed', 'the session that got the trimmed conversation goes on');
      assert.equal(next.runs[0]!.session, 'resume');
    } finally {
      await t.close();
    }
  });

  it('a turn the provider still refuses as too long gets a clear 400 context_length_exceeded', async () => {
    const t = await startTestDaemon({
      config: { contextTokens: { claude: 16_000 }, contextOverflow: 'trim' },
      claudeEnv: { FAKE_CLAUDE_CHARS_PER_TOKEN: '2', FAKE_CLAUDE_TOKEN_LIMIT: '16000' },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      // 40,000 characters: 10,000 tokens to olp's first estimate, 20,000 to the provider.
      const r = await send(t, client, [{ role: 'user', content: words(40_000, 'big') }]);
      assert.ok(r.error instanceof OpenAI.BadRequestError);
      assert.equal(r.error.code, 'context_length_exceeded');
      assert.equal(r.error.type, 'invalid_request_error');
      assert.match(
        r.error.message,
        /^400 The conversation is too long for the model: the model provider refused the prompt claude sent/,
      );
      assert.doesNotMatch(r.error.message, /Prompt is too long/, 'not the CLI’s own text');
    } finally {
      await t.close();
    }
  });
});
