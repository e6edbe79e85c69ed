// The per-key session pool against a fake claude that keeps sessions the way the real one does.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { listTree, OLP_BIN } from '../support/paths.js';
import { readRecord, recordedPids, type RunRecord } from '../support/procs.js';
import { PATIENCE_MS, waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

/** Sends a request and returns the reply with the fake's record(s) of the run(s) it caused. */
async function turn(
  t: TestDaemon,
  client: OpenAI,
  messages: Msg[],
  extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
) {
  const before = new Set(recordedPids(t.recordDir).runs);
  const { data, response } = await client.chat.completions
    .create({ model: 'sonnet', messages, ...extra })
    .withResponse();
  const runs = recordedPids(t.recordDir)
    .runs.filter((p) => !before.has(p))
    .map((p) => readRecord(t.recordDir, p));
  return { reply: data.choices[0]!.message.content!, runs, mode: response.headers.get('x-olp-session-mode') };
}

const only = (runs: RunRecord[]) => {
  assert.equal(runs.length, 1, JSON.stringify(runs));
  return runs[0]!;
};

function ledger(t: TestDaemon): { session_mode: string; rotation_reason: string | null; session_id: string | null }[] {
  return t.logs
    .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
    .map((l) => ({
      session_mode: l.session as string,
      rotation_reason: (l.rotation as string) ?? null,
      session_id: null,
    }));
}

describe('session pool', () => {
  it('a 10-turn conversation resumes on turns 2-10, sending only the new user text, with the same answers', async () => {
    const t = await startTestDaemon();
    const off = await startTestDaemon({ config: { sessions: false } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const plain = new OpenAI({ baseURL: off.baseURL, apiKey: off.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'system', content: 'Be brief.' }];
      const ids = new Set<string>();
      for (let i = 1; i <= 10; i++) {
        messages.push({ role: 'user', content: `question number ${i}` });
        const r = await turn(t, client, messages);
        const run = only(r.runs);
        const reference = await plain.chat.completions.create({ model: 'sonnet', messages });
        assert.equal(r.reply, reference.choices[0]!.message.content, 'same answer as without the pool');
        if (i === 1) {
          assert.deepEqual([r.mode, run.session], ['fresh', 'new']);
        } else {
          assert.deepEqual([r.mode, run.session, run.historyTurns], ['resumed', 'resume', i - 1]);
          assert.equal(run.stdin, `question number ${i}`, 'only the new user turn is sent');
        }
        assert.ok(!run.argv.some((a) => a.includes('question')), 'no prompt text in argv');
        ids.add(run.sessionId!);
        messages.push({ role: 'assistant', content: r.reply });
      }
      assert.equal(ids.size, 1, 'one CLI session for the whole conversation');
      const modes = ledger(t).map((l) => l.session_mode);
      assert.deepEqual(modes, ['fresh', ...Array(9).fill('resumed')]);
    } finally {
      await t.close();
      await off.close();
    }
  });

  it('editing an earlier message rotates to a fresh session with the whole transcript', async () => {
    // One slot that cannot grow: the edited conversation takes the slot of the one it came from.
    const t = await startTestDaemon({ config: { sessionPool: 1, maxSessionSlots: 1 } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const a = await turn(t, client, [{ role: 'user', content: 'first' }]);
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'initial');
      const b = await turn(t, client, [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: a.reply },
        { role: 'user', content: 'second' },
      ]);
      assert.equal(b.mode, 'resumed');
      const editedConvo: Msg[] = [
        { role: 'user', content: 'FIRST (edited)' },
        { role: 'assistant', content: a.reply },
        { role: 'user', content: 'second' },
      ];
      const edited = await turn(t, client, editedConvo);
      const run = only(edited.runs);
      assert.deepEqual([edited.mode, run.session], ['fresh', 'new']);
      assert.match(run.stdin ?? '', /<conversation>[\s\S]*FIRST \(edited\)[\s\S]*second/);
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'divergent');
      // The abandoned session's transcript goes with the rotation (its files, in the background):
      // one session file is left in the slot.
      const projects = join(run.cwd, '..', 'state', 'claude-projects');
      const sessionFiles = () =>
        listTree(projects)
          .filter((f) => f.endsWith('.jsonl'))
          .map((f) => f.split('/').pop());
      await waitFor(() => sessionFiles().length <= 1, PATIENCE_MS, 'the abandoned session file to go');
      assert.deepEqual(sessionFiles(), [`${run.sessionId}.jsonl`]);
      // The same conversation under a changed system prompt rotates its own slot.
      const sys = await turn(t, client, [
        { role: 'system', content: 'new rules' },
        ...editedConvo,
        { role: 'assistant', content: edited.reply },
        { role: 'user', content: 'third' },
      ]);
      assert.equal(sys.mode, 'fresh');
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'system_changed');
    } finally {
      await t.close();
    }
  });

  it('two keys never share a session or a session directory', async () => {
    const t = await startTestDaemon();
    try {
      const other = t.daemon.store.keys.add('other').token;
      const c1 = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const c2 = new OpenAI({ baseURL: t.baseURL, apiKey: other, maxRetries: 0 });
      const msgs: Msg[] = [{ role: 'user', content: 'identical' }];
      const r1 = only((await turn(t, c1, msgs)).runs);
      const r2 = only((await turn(t, c2, msgs)).runs);
      assert.notEqual(r1.sessionId, r2.sessionId);
      assert.notEqual(r1.cwd, r2.cwd);
      // Key 2 continuing key 1's exact conversation still gets a fresh session of its own.
      const next = await turn(t, c2, [
        ...msgs,
        { role: 'assistant', content: 'Hello from fake claude. You said: identical' },
        { role: 'user', content: 'more' },
      ]);
      assert.equal(only(next.runs).sessionId, r2.sessionId);
      assert.notEqual(only(next.runs).sessionId, r1.sessionId);
    } finally {
      await t.close();
    }
  });

  it('concurrent continuations of one conversation never run the same session at once', async () => {
    const t = await startTestDaemon({ claudeEnv: { FAKE_CLAUDE_DELAY_MS: '40' } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const first = await turn(t, client, [{ role: 'user', content: 'start' }]);
      const next: Msg[] = [
        { role: 'user', content: 'start' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: 'go on' },
      ];
      const before = new Set(recordedPids(t.recordDir).runs);
      const results = await Promise.all(
        [0, 1, 2].map(() => client.chat.completions.create({ model: 'sonnet', messages: next }).withResponse()),
      );
      const runs = recordedPids(t.recordDir)
        .runs.filter((p) => !before.has(p))
        .map((p) => readRecord(t.recordDir, p));
      const sessions = runs.map((r) => r.sessionId).filter(Boolean);
      assert.equal(
        new Set(sessions).size,
        sessions.length,
        `a session ran twice at once: ${JSON.stringify(runs.map((r) => [r.session, r.sessionId]))}`,
      );
      assert.equal(runs.filter((r) => r.session === 'resume').length, 1, 'exactly one of them resumed');
      for (const { data } of results) assert.match(data.choices[0]!.message.content!, /go on/);
    } finally {
      await t.close();
    }
  });

  it('an aborted turn makes the next request rotate', async () => {
    const t = await startTestDaemon();
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const first = await turn(t, client, [{ role: 'user', content: 'hello' }]);
      const convo: Msg[] = [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: '[[fake:slow]] a slow one with many many deltas to abort' },
      ];
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'sonnet', messages: convo, stream: true },
        { signal: controller.signal },
      );
      let n = 0;
      try {
        for await (const _ of stream) if (++n === 2) controller.abort();
      } catch {
        // aborted
      }
      const deadline = Date.now() + 5000;
      while (t.daemon.children > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 50));
      const again = await turn(t, client, convo.slice(0, 2).concat({ role: 'user', content: 'retry after abort' }));
      assert.equal(again.mode, 'fresh');
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'aborted');
    } finally {
      await t.close();
    }
  });

  it('a refused resume is retried once, then rotated; the client never sees it', async () => {
    const t = await startTestDaemon({ claudeEnv: { FAKE_CLAUDE_RESUME_FLAKY: '1' } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const first = await turn(t, client, [{ role: 'user', content: 'one' }]);
      const second = await turn(t, client, [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: 'two' },
      ]);
      assert.deepEqual(
        second.runs.map((r) => r.session),
        ['resume-refused', 'resume'],
      );
      assert.equal(second.mode, 'resumed');
      // The CLI lost the transcript altogether: retried, then a fresh session with everything.
      const cwd = only(first.runs).cwd;
      const projects = join(cwd, '..', 'state', 'claude-projects');
      for (const d of readdirSync(projects)) rmSync(join(projects, d), { recursive: true });
      const third = await turn(t, client, [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: second.reply },
        { role: 'user', content: 'three' },
      ]);
      assert.deepEqual(
        third.runs.map((r) => r.session),
        ['resume-refused', 'resume-refused', 'new'],
      );
      assert.match(third.reply, /three/);
      assert.match(third.runs.at(-1)!.stdin ?? '', /<conversation>[\s\S]*one[\s\S]*two[\s\S]*three/);
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'resume_failed');
    } finally {
      await t.close();
    }
  });

  it('all slots busy and the pool at its bound: after the wait the request runs ephemeral and still succeeds', async () => {
    const t = await startTestDaemon({
      config: { sessionPool: 1, maxSessionSlots: 1, sessionWait: 0 },
      claudeEnv: { FAKE_CLAUDE_DELAY_MS: '40' },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const [a, b] = await Promise.all([
        turn(t, client, [{ role: 'user', content: 'conversation A' }]),
        turn(t, client, [{ role: 'user', content: 'conversation B' }]),
      ]);
      assert.deepEqual([a.mode, b.mode].sort(), ['ephemeral', 'fresh']);
      const eph = [a, b].find((x) => x.mode === 'ephemeral')!;
      const ephRun = eph.runs.find((r) => r.stdin === (eph === a ? 'conversation A' : 'conversation B'));
      assert.equal(ephRun?.session, 'none');
      assert.match(eph.reply, /conversation/);
    } finally {
      await t.close();
    }
  });

  it('survives a restart, and the operator can rotate a key’s sessions', async () => {
    let t = await startTestDaemon();
    const base = t.base;
    const token = t.token;
    try {
      let client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
      const first = await turn(t, client, [{ role: 'user', content: 'persist me' }]);
      await t.close(true);
      t = await startTestDaemon({ base });
      client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
      const convo: Msg[] = [
        { role: 'user', content: 'persist me' },
        { role: 'assistant', content: first.reply },
        { role: 'user', content: 'after restart' },
      ];
      const resumed = await turn(t, client, convo);
      assert.deepEqual([resumed.mode, only(resumed.runs).historyTurns], ['resumed', 1]);

      const list = spawnSync(
        process.execPath,
        [OLP_BIN, 'sessions', 'list', '--key', 'tester', '--state-dir', t.stateDir],
        { encoding: 'utf8' },
      );
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /tester\s+claude\s+0\s+[0-9a-f]{8}…\s+\S+\s+\S+\s+2\s+1\s+initial\s+ready\s+\d+%/);
      const rotate = spawnSync(
        process.execPath,
        [OLP_BIN, 'sessions', 'rotate', '--key', 'tester', '--state-dir', t.stateDir],
        { encoding: 'utf8' },
      );
      assert.equal(rotate.status, 0, rotate.stderr);
      const after = await turn(t, client, [
        ...convo,
        { role: 'assistant', content: resumed.reply },
        { role: 'user', content: 'after rotate' },
      ]);
      assert.equal(after.mode, 'fresh');
      assert.equal(ledger(t).at(-1)?.rotation_reason, 'operator');
    } finally {
      await t.close();
    }
  });
});
