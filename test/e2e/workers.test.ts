// Live workers: a continued conversation is answered by the claude process kept from its last turn.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseConfig } from '../../src/config/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FAKE_CLAUDE, FAKE_CODEX } from '../support/paths.js';
import { isAlive, leftoverWorkspaces, readRecord, recordedPids, sessionFileHolds } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

interface History {
  historyTurns: number;
  said: string[];
  pid: number;
  turn: number;
}

const startWorkers = (
  config: Record<string, unknown> = {},
  claudeEnv: Record<string, string> = {},
  codexEnv: Record<string, string> = {},
) => startTestDaemon({ config: { workers: true, prestart: false, ...config }, claudeEnv, codexEnv });

function runModes(t: TestDaemon): string[] {
  return t.logs
    .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
    .map((l) => String(l.run ?? '-'));
}

/** A conversation whose fake CLI answers each turn with what it remembers (see the fake's report-history). */
function conversation(t: TestDaemon, token = t.token) {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  const messages: Msg[] = [{ role: 'system', content: '[[fake:report-history]]' }];
  return {
    client,
    messages,
    async say(text: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}): Promise<History> {
      messages.push({ role: 'user', content: text });
      const r = await client.chat.completions.create({ model: 'sonnet', messages, ...extra });
      const reply = r.choices[0]!.message.content!;
      messages.push({ role: 'assistant', content: reply });
      return JSON.parse(reply) as History;
    },
  };
}

describe('live workers', () => {
  it('a 6-turn conversation starts one claude process; turns 2-6 go to it with only the new text', async () => {
    const t = await startWorkers();
    try {
      const c = conversation(t);
      const pids = new Set<number>();
      for (let i = 1; i <= 6; i++) {
        const h = await c.say(`question ${i}`);
        assert.equal(h.historyTurns, i - 1, 'the process remembers the conversation');
        assert.equal(h.turn, i, 'turn i of one process');
        pids.add(h.pid);
      }
      assert.equal(pids.size, 1);
      assert.equal(recordedPids(t.recordDir).runs.length, 1, 'one claude process started in all');
      const rec = readRecord(t.recordDir, [...pids][0]!);
      assert.equal(rec.stdin, 'question 6', 'only the new user turn is written');
      await waitFor(() => runModes(t).length === 6);
      assert.deepEqual(runModes(t), ['cold', 'warm', 'warm', 'warm', 'warm', 'warm']);
      await waitFor(() => [...t.daemon.store.usage.export({ scope: { all: true } })].length === 6);
      const rows = [...t.daemon.store.usage.export({ scope: { all: true } })];
      assert.deepEqual(
        rows.map((r) => r.run_mode),
        ['cold', 'warm', 'warm', 'warm', 'warm', 'warm'],
      );
      assert.ok(isAlive([...pids][0]!), 'the worker waits for the next turn');
      // The owner sees it in /health, and `olp doctor` finds it by its HOME.
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { max: number; live: { pid: number; turns: number; rssMb: number; state: string }[] } };
      assert.equal(health.workers.live.length, 1);
      assert.deepEqual(
        [health.workers.live[0]!.pid, health.workers.live[0]!.turns, health.workers.live[0]!.state],
        [[...pids][0], 6, 'idle'],
      );
      assert.ok(health.workers.live[0]!.rssMb > 0 && health.workers.max > 0);
      let doctor = '';
      await runDoctor(
        parseConfig({
          readFile: false,
          env: {},
          overrides: { stateDir: t.stateDir, claudeBin: FAKE_CLAUDE, codexBin: FAKE_CODEX, port: 0 },
        }),
        { PATH: process.env.PATH, HOME: t.operatorHome },
        (s) => (doctor += s),
      );
      assert.match(
        doctor,
        new RegExp(`CLIs +1 running for this state dir[^]*pid ${[...pids][0]} +node +\\d+ MB +up \\d+s`),
      );
      assert.equal(leftoverWorkspaces(t.stateDir).length, 1, "the worker's workspace lives with it");
    } finally {
      await t.close(true);
    }
    // Shutdown: the worker is gone, and so is its workspace.
    const pid = recordedPids(t.recordDir).runs[0]!;
    assert.ok(!isAlive(pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });
});

describe('live workers, when something goes wrong', () => {
  it('a worker that exits while idle is replaced: the next turn resumes cold, the one after is warm again', async () => {
    const t = await startWorkers({}, { FAKE_CLAUDE_LIVE_EXIT_AFTER_TURN: '2' });
    try {
      const c = conversation(t);
      const first = await c.say('one');
      await c.say('two');
      await waitFor(() => !isAlive(first.pid));
      const third = await c.say('three');
      assert.notEqual(third.pid, first.pid);
      assert.equal(third.historyTurns, 2, 'resumed from the session file');
      const fourth = await c.say('four');
      assert.equal(fourth.pid, third.pid);
      await waitFor(() => runModes(t).length === 4);
      assert.deepEqual(runModes(t), ['cold', 'warm', 'resumed', 'warm']);
    } finally {
      await t.close();
    }
  });

  it('a worker that says nothing after a write is dropped and the turn runs cold, unseen by the client', async () => {
    const t = await startWorkers({}, { FAKE_CLAUDE_LIVE_HANG_TURN: '2' });
    try {
      const c = conversation(t);
      const first = await c.say('one');
      const started = Date.now();
      const second = await c.say('two');
      assert.ok(Date.now() - started >= 1900, 'after the ~2 s sign-of-life bound');
      assert.notEqual(second.pid, first.pid);
      assert.equal(second.historyTurns, 1);
      await waitFor(() => !isAlive(first.pid));
      await waitFor(() => runModes(t).length === 2);
      assert.deepEqual(runModes(t), ['cold', 'resumed']);
      assert.ok(t.logs.some((l) => l.event === 'worker_fallback'));
    } finally {
      await t.close();
    }
  });

  it('a worker that refuses a line (exits without a word) is replaced by a cold run', async () => {
    const t = await startWorkers({}, { FAKE_CLAUDE_LIVE_REFUSE_TURN: '2' });
    try {
      const c = conversation(t);
      const first = await c.say('one');
      const second = await c.say('two');
      assert.notEqual(second.pid, first.pid);
      assert.equal(second.historyTurns, 1);
      await waitFor(() => runModes(t).length === 2);
      assert.deepEqual(runModes(t), ['cold', 'resumed']);
    } finally {
      await t.close();
    }
  });

  it('an error result retires the worker; the client gets the error and the slot starts over', async () => {
    const t = await startWorkers({}, { FAKE_CLAUDE_LIVE_FAIL_TURN: '2' });
    try {
      const c = conversation(t);
      const first = await c.say('one');
      await assert.rejects(c.say('two'), (err: unknown) => err instanceof OpenAI.APIError && err.status === 429);
      await waitFor(() => !isAlive(first.pid));
      c.messages.pop(); // the failed user turn; the client tries again
      const again = await c.say('two again');
      assert.notEqual(again.pid, first.pid);
      assert.equal(again.historyTurns, 0, 'a fresh session: the failed one is not trusted');
    } finally {
      await t.close();
    }
  });

  it('a client that leaves mid-turn retires the worker; nothing is left behind', async () => {
    const t = await startWorkers({}, { FAKE_CLAUDE_DELAY_MS: '100', FAKE_CLAUDE_PIECE_BYTES: '4' });
    try {
      const c = conversation(t);
      c.messages[0] = { role: 'system', content: 'plain' };
      c.messages.push({ role: 'user', content: 'one' });
      const r = await c.client.chat.completions.create({ model: 'sonnet', messages: c.messages });
      c.messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
      const [pid] = recordedPids(t.recordDir).runs;
      c.messages.push({ role: 'user', content: 'two' });
      const stream = await c.client.chat.completions.create({ model: 'sonnet', messages: c.messages, stream: true });
      for await (const _chunk of stream) break; // one chunk, then gone
      await waitFor(() => !isAlive(pid!));
      await waitFor(() => leftoverWorkspaces(t.stateDir).length === 0);
      await waitFor(() => runModes(t).length === 2);
      assert.deepEqual(runModes(t), ['cold', '-']);
    } finally {
      await t.close();
    }
  });

  it('a warm turn that stalls after it started gets the idle timeout; the worker goes, and so does its workspace', async () => {
    const t = await startWorkers({ idleTimeout: 1 });
    try {
      const c = conversation(t);
      c.messages[0] = { role: 'system', content: 'plain' };
      c.messages.push({ role: 'user', content: 'one' });
      const r = await c.client.chat.completions.create({ model: 'sonnet', messages: c.messages });
      c.messages.push(
        { role: 'assistant', content: r.choices[0]!.message.content! },
        { role: 'user', content: '[[fake:hang]] two' },
      );
      const [pid] = recordedPids(t.recordDir).runs;
      await assert.rejects(
        c.client.chat.completions.create({ model: 'sonnet', messages: c.messages }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 504,
      );
      await waitFor(() => !isAlive(pid!));
      await waitFor(() => leftoverWorkspaces(t.stateDir).length === 0);
    } finally {
      await t.close();
    }
  });

  it('a model change retires the worker and resumes cold with the new model', async () => {
    const t = await startWorkers();
    try {
      const c = conversation(t);
      const first = await c.say('one');
      const second = await c.say('two', { model: 'opus' });
      assert.notEqual(second.pid, first.pid);
      assert.equal(second.historyTurns, 1);
      assert.ok(readRecord(t.recordDir, second.pid).argv.includes('opus'));
      await waitFor(() => !isAlive(first.pid));
      const third = await c.say('three', { model: 'opus' });
      assert.equal(third.pid, second.pid, 'the new process is the worker now');
    } finally {
      await t.close();
    }
  });

  it('idle time, turn count and the worker cap retire workers', async () => {
    const t = await startWorkers({ workerIdle: 1, workerMaxTurns: 3, maxWorkers: 1 });
    try {
      // Idle: gone after a second without a turn, workspace too; the next turn resumes cold.
      const a = conversation(t);
      const a1 = await a.say('a one');
      await waitFor(() => !isAlive(a1.pid));
      await waitFor(() => leftoverWorkspaces(t.stateDir).length === 0);
      const a2 = await a.say('a two');
      assert.notEqual(a2.pid, a1.pid);
      // Turn count: the third turn of a process is its last.
      const a3 = await a.say('a three');
      const a4 = await a.say('a four');
      assert.equal(a3.pid, a2.pid);
      assert.equal(a4.pid, a2.pid);
      await waitFor(() => !isAlive(a4.pid));
      // Cap of one: a second conversation's process evicts the idle first one.
      const a5 = await a.say('a five');
      const b = conversation(t);
      b.messages[0] = { role: 'system', content: '[[fake:report-history]] another conversation' };
      const b1 = await b.say('b one');
      await waitFor(() => !isAlive(a5.pid));
      const b2 = await b.say('b two');
      assert.equal(b2.pid, b1.pid);
    } finally {
      await t.close();
    }
  });

  it("one key's worker never serves another key, even for the same conversation", async () => {
    const t = await startWorkers();
    try {
      const other = t.daemon.store.keys.add('other', 'member').token;
      const mine = conversation(t);
      const theirs = conversation(t, other);
      const m1 = await mine.say('same words');
      const o1 = await theirs.say('same words');
      assert.notEqual(o1.pid, m1.pid);
      const m2 = await mine.say('second');
      const o2 = await theirs.say('second');
      assert.equal(m2.pid, m1.pid);
      assert.equal(o2.pid, o1.pid);
      assert.deepEqual(m2.said, ['same words']);
      assert.deepEqual(o2.said, ['same words']);
      const homes = new Set([m1.pid, o1.pid].map((p) => readRecord(t.recordDir, p).cwd));
      assert.equal(homes.size, 2, 'each in its own slot directory');
    } finally {
      await t.close();
    }
  });

  it('a streamed warm turn streams deltas and usage like a cold one', async () => {
    const t = await startWorkers();
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'user', content: 'one' }];
      const r = await client.chat.completions.create({ model: 'sonnet', messages });
      messages.push({ role: 'assistant', content: r.choices[0]!.message.content! }, { role: 'user', content: 'two' });
      const stream = await client.chat.completions.create({
        model: 'sonnet',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let chunks = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const ch of stream) {
        text += ch.choices[0]?.delta.content ?? '';
        chunks++;
        usage = ch.usage ?? usage;
      }
      assert.equal(text, 'Hello from fake claude. You said: two');
      assert.ok(chunks > 3);
      assert.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0);
      await waitFor(() => runModes(t).length === 2);
      assert.deepEqual(runModes(t), ['cold', 'warm']);
      await waitFor(() => [...t.daemon.store.usage.export({ scope: { all: true } })].length === 2);
      const warm = [...t.daemon.store.usage.export({ scope: { all: true } })].find((r) => r.run_mode === 'warm')!;
      assert.ok(
        warm.cost_usd !== null && Math.abs(warm.cost_usd - 0.000111) < 1e-9,
        `a warm turn costs its own share, not the process's total (${warm.cost_usd})`,
      );
    } finally {
      await t.close();
    }
  });
});

describe('pre-started CLIs', () => {
  it("after a key's turn a spare waits; the key's next new conversation starts on it, and continues warm", async () => {
    const t = await startWorkers({ prestart: true });
    try {
      const a = conversation(t);
      const a1 = await a.say('first conversation');
      await waitFor(() => recordedPids(t.recordDir).runs.length === 2);
      const spare = recordedPids(t.recordDir).runs.find((p) => p !== a1.pid)!;
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { pid: number; state: string }[] } };
      await waitFor(() => readRecord(t.recordDir, spare).argv.length > 0);
      assert.ok(
        health.workers.live.some((w) => w.pid === spare && w.state === 'spare'),
        JSON.stringify(health.workers),
      );
      const argv = readRecord(t.recordDir, spare).argv;
      assert.ok(
        !argv.includes('--system-prompt-file') && !argv.includes('--session-id'),
        'started before its conversation existed',
      );
      // A new conversation: its first turn goes to the spare, system prompt included (initialize).
      const b = conversation(t);
      b.messages[0] = { role: 'system', content: '[[fake:report-history]] conversation B' };
      const b1 = await b.say('B one');
      assert.equal(b1.pid, spare);
      assert.equal(b1.historyTurns, 0);
      const b2 = await b.say('B two');
      assert.equal(b2.pid, spare, 'then it is the slot’s worker');
      assert.deepEqual(b2.said, ['B one']);
      await waitFor(() => runModes(t).length === 3);
      assert.deepEqual(runModes(t), ['cold', 'prestarted', 'warm']);
      // Its session was kept under the id it picked: after the worker goes, a cold resume continues
      // it. (The CLI writes a turn to its session file just after its result: a SIGKILL before
      // that loses the turn, so wait for it as a crash later on would.)
      await waitFor(() => sessionFileHolds(t.stateDir, 'B two'));
      process.kill(spare, 'SIGKILL');
      await waitFor(() => !isAlive(spare));
      await new Promise((r) => setTimeout(r, 100));
      const b3 = await b.say('B three');
      assert.notEqual(b3.pid, spare);
      assert.equal(b3.historyTurns, 2, 'resumed from the session file the spare wrote');
    } finally {
      await t.close(true);
    }
    const pids = recordedPids(t.recordDir).runs;
    for (const pid of pids) assert.ok(!isAlive(pid), `${pid} stopped with olp`);
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('back-to-back new conversations each start on the spare the last turn left, even one still starting', async () => {
    const t = await startWorkers({ prestart: true });
    try {
      // Each request comes the moment the last one is answered: its spare is then still starting.
      for (let i = 0; i < 6; i++) {
        const c = conversation(t);
        c.messages[0] = { role: 'system', content: `[[fake:report-history]] conversation ${i}` };
        await c.say(`new conversation ${i}`);
      }
      await waitFor(() => runModes(t).length === 6);
      assert.deepEqual(runModes(t), ['cold', 'prestarted', 'prestarted', 'prestarted', 'prestarted', 'prestarted']);
    } finally {
      await t.close();
    }
  });

  it('a key sending a new conversation with every request keeps its spares once its one-turn workers fill --max-workers', async () => {
    const t = await startWorkers({ prestart: true, maxWorkers: 3 });
    try {
      for (let i = 0; i < 8; i++) {
        const c = conversation(t);
        c.messages[0] = { role: 'system', content: `[[fake:report-history]] one-shot ${i}` };
        await c.say(`one-shot ${i}`);
      }
      await waitFor(() => runModes(t).length === 8);
      assert.deepEqual(runModes(t), ['cold', ...Array(7).fill('prestarted')]);
      // Never more live CLIs than the cap: a spare took the place of a worker whose conversation never went on.
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: unknown[] } };
      assert.ok(health.workers.live.length <= 3, JSON.stringify(health.workers));
    } finally {
      await t.close();
    }
  });

  it('a spare started for one model does not serve another; a request with its own output cap runs cold', async () => {
    const t = await startWorkers({ prestart: true });
    try {
      const a = conversation(t);
      await a.say('first conversation');
      await waitFor(() => recordedPids(t.recordDir).runs.length === 2);
      const spare = recordedPids(t.recordDir).runs.at(-1)!;
      await waitFor(() => t.logs.some((l) => l.event === 'spare_started'));
      const b = conversation(t);
      const b1 = await b.say('B one', { model: 'opus' });
      assert.notEqual(b1.pid, spare);
      const c = conversation(t);
      c.messages[0] = { role: 'system', content: '[[fake:report-history]] conversation C' };
      const c1 = await c.say('C one', { max_tokens: 50 });
      assert.notEqual(c1.pid, spare);
      await waitFor(() => runModes(t).length === 3);
      assert.deepEqual(runModes(t), ['cold', 'cold', 'cold']);
    } finally {
      await t.close();
    }
  });
});

describe('codex workers (app-server)', () => {
  /** A codex conversation; returns each reply and the fake's record of the process that answered. */
  function codexChat(t: TestDaemon) {
    const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
    const messages: Msg[] = [{ role: 'system', content: 'Be brief.' }];
    return {
      messages,
      async say(text: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) {
        messages.push({ role: 'user', content: text });
        const r = await client.chat.completions.create({ model: 'codex', messages, ...extra });
        messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
        return r;
      },
    };
  }

  /** The pid of the app-server worker of this daemon, once it is up. */
  async function appServer(t: TestDaemon): Promise<number> {
    let pid: number | undefined;
    await waitFor(() => {
      pid = recordedPids(t.recordDir).runs.find(
        (p) => readRecord(t.recordDir, p).argv[0] === 'app-server' && isAlive(p),
      );
      return pid !== undefined && t.logs.some((l) => l.event === 'worker_starting');
    });
    await new Promise((r) => setTimeout(r, 200));
    return pid!;
  }

  it('after a cold codex exec turn an app-server loads the thread; the next turns stream from it with their own usage', async () => {
    const t = await startWorkers();
    try {
      const c = codexChat(t);
      const r1 = await c.say('first');
      assert.equal(r1.choices[0]!.message.content, 'Hello from fake codex. You said: first');
      const worker = await appServer(t);
      const r2 = await c.say('second');
      assert.equal(r2.choices[0]!.message.content, 'Hello from fake codex. You said: second');
      const rec = readRecord(t.recordDir, worker) as unknown as { stdin: string; historyTurns: number; turn: number };
      assert.deepEqual(
        [rec.stdin, rec.historyTurns, rec.turn],
        ['second', 1, 1],
        'only the new turn went to the worker, which has the history',
      );
      // Each turn's usage is its own share of the thread's running total.
      assert.equal(r2.usage!.completion_tokens, 10);
      assert.ok(r2.usage!.prompt_tokens < 200, `prompt tokens ${r2.usage!.prompt_tokens} are this turn's`);
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      c.messages.push({ role: 'user', content: 'third' });
      const stream = await client.chat.completions.create({ model: 'codex', messages: c.messages, stream: true });
      let text = '';
      let chunks = 0;
      for await (const ch of stream) {
        text += ch.choices[0]?.delta.content ?? '';
        chunks++;
      }
      assert.equal(text, 'Hello from fake codex. You said: third');
      assert.ok(chunks > 4, 'deltas, not one message');
      await waitFor(() => runModes(t).length === 3);
      assert.deepEqual(runModes(t), ['cold', 'warm', 'warm']);
      assert.equal(
        recordedPids(t.recordDir).runs.filter((p) => readRecord(t.recordDir, p).argv[0] === 'exec').length,
        1,
        'one codex exec in all',
      );
    } finally {
      await t.close(true);
    }
    assert.ok(recordedPids(t.recordDir).runs.every((p) => !isAlive(p)));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('a failed turn retires the app-server; the conversation goes on cold, then warm on a new one', async () => {
    const u = await startWorkers({}, {}, { FAKE_CODEX_LIVE_FAIL_TURN: '1' });
    try {
      const c = codexChat(u);
      await c.say('first');
      const worker = await appServer(u);
      await assert.rejects(c.say('second'), (err: unknown) => err instanceof OpenAI.APIError && err.status >= 500);
      await waitFor(() => !isAlive(worker));
      c.messages.pop();
      const again = await c.say('second again');
      assert.equal(again.choices[0]!.message.content, 'Hello from fake codex. You said: second again');
      await waitFor(() => runModes(u).length === 3);
      assert.deepEqual(
        runModes(u).filter((m) => m !== '-'),
        ['cold', 'warm', 'cold'],
      );
    } finally {
      await u.close();
    }
  });

  for (const c of [
    { delay: '800', modes: ['cold', 'warm'], dropped: false, what: 'waits for it, and runs on it warm' },
    { delay: '6000', modes: ['cold', 'resumed'], dropped: true, what: 'runs without it once it has waited 2 s' },
  ]) {
    it(`a turn that comes while the app-server is starting ${c.what}`, async () => {
      const t = await startWorkers({}, {}, { FAKE_CODEX_APP_SERVER_DELAY_MS: c.delay });
      try {
        const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
        const messages: Msg[] = [{ role: 'user', content: 'one' }];
        const r1 = await client.chat.completions.create({ model: 'codex', messages });
        messages.push(
          { role: 'assistant', content: r1.choices[0]!.message.content! },
          { role: 'user', content: 'two' },
        );
        // At once: the worker is still starting.
        const r2 = await client.chat.completions.create({ model: 'codex', messages });
        assert.equal(r2.choices[0]!.message.content, 'Hello from fake codex. You said: two');
        await waitFor(() => runModes(t).length === 2);
        assert.deepEqual(runModes(t), c.modes);
        assert.equal(
          t.logs.some((l) => l.event === 'worker_retired' && l.reason === 'superseded'),
          c.dropped,
          'the starting worker was dropped',
        );
      } finally {
        await t.close();
      }
    });
  }
});
