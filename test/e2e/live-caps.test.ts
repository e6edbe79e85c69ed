// What bounds the live CLIs olp holds beside its running turns (workers, spares, parked tool-call
// turns): a key's parked turns count against its concurrency, every CLI against --max-processes
// (counted under /proc here, not only by olp), and revoking, disabling or expiring a key stops its
// CLIs at once.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';
import { fakeCliProcesses, isAlive, recordedPids, waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

const WEATHER: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
/** A user message that makes the fake model call get_weather. */
const asking = (city: string): Msg => ({
  role: 'user',
  content: `Weather in ${city}? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city } }])}]]`,
});

function olp(t: TestDaemon, args: string[]): void {
  const r = spawnSync(process.execPath, [OLP_BIN, ...args, '--state-dir', t.stateDir], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: t.operatorHome },
  });
  assert.equal(r.status, 0, r.stderr);
}

interface Live {
  pid: number;
  slot: string;
  state: string;
}

async function liveClis(t: TestDaemon): Promise<Live[]> {
  const h = (await (await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as {
    workers: { live: Live[] };
  };
  return h.workers.live;
}

/**
 * Gives the key a live worker (a finished turn), a spare that is up (started after it) and a
 * parked tool-call turn; returns the three pids.
 */
async function holdClis(
  t: TestDaemon,
  token: string,
  name: string,
): Promise<{ worker: number; spare: number; parked: number }> {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  await client.chat.completions.create({
    model: 'sonnet',
    messages: [{ role: 'user', content: `hello from ${name}` }],
  });
  const keyId = t.daemon.store.keys.get(name)!.id;
  const mine = async () => (await liveClis(t)).filter((w) => w.slot.startsWith(`${keyId}/`));
  await waitFor(
    async () => (await mine()).some((w) => w.state === 'spare') && (await mine()).some((w) => w.state === 'idle'),
  );
  const live = await mine();
  const before = new Set(recordedPids(t.recordDir).runs);
  const r = await client.chat.completions.create({ model: 'sonnet', messages: [asking(name)], tools: [WEATHER] });
  assert.equal(r.choices[0]!.finish_reason, 'tool_calls');
  const parked = recordedPids(t.recordDir).runs.find((p) => !before.has(p))!;
  assert.ok(isAlive(parked), 'the tool-call turn waits, parked');
  return {
    worker: live.find((w) => w.state === 'idle')!.pid,
    spare: live.find((w) => w.state === 'spare')!.pid,
    parked,
  };
}

describe("a key's live CLIs when the key stops", () => {
  for (const [how, args] of [
    ['revoked', (name: string) => ['keys', 'revoke', name]],
    ['disabled', (name: string) => ['keys', 'set', name, '--disable']],
  ] as const) {
    it(`olp keys ${how === 'revoked' ? 'revoke' : 'set --disable'} (another process): its worker, spare and parked turn are gone within a second; other keys' stay`, async () => {
      const t = await startTestDaemon({ config: { workers: true, prestart: true } });
      try {
        const alice = t.daemon.store.keys.add('alice', 'member').token;
        const mine = await holdClis(t, alice, 'alice');
        const theirs = await holdClis(t, t.token, 'tester');
        const started = Date.now();
        olp(t, args('alice'));
        const left = await waitGone([mine.worker, mine.spare, mine.parked], 15_000);
        assert.deepEqual(left, [], `alice's CLIs gone ${Date.now() - started} ms after the command started`);
        for (const pid of [theirs.worker, theirs.spare, theirs.parked])
          assert.ok(isAlive(pid), `another key's CLI ${pid} is untouched`);
        assert.ok(t.logs.some((l) => l.event === 'key_clis_retired' && l.reason === how));
      } finally {
        await t.close();
      }
    });
  }

  it('a key whose expiry passes loses its live CLIs within a second of it, with no write to notice', async () => {
    const t = await startTestDaemon({ config: { workers: true, prestart: true } });
    try {
      const theirs = await holdClis(t, t.token, 'tester');
      // The key's CLIs must all be up before its expiry: on a busy machine that can take longer
      // than the first window, so a later key gets a longer one.
      let mine: Awaited<ReturnType<typeof holdClis>> | undefined;
      for (let window = 2500; !mine; window *= 2) {
        assert.ok(window <= 40_000, 'the CLIs could not be set up before the expiry');
        const expiresAt = Date.now() + window;
        const name = `bob-${window}`;
        const bob = t.daemon.store.keys.add(name, 'member', { expiresAt: new Date(expiresAt).toISOString() }).token;
        const held = await holdClis(t, bob, name).catch(() => undefined);
        const wait = expiresAt - Date.now();
        if (!held || wait <= 100) continue;
        await new Promise((r) => setTimeout(r, wait));
        mine = held;
      }
      // Within a second on a quiet machine; the bound here is the test's patience, not the claim.
      const left = await waitGone([mine.worker, mine.spare, mine.parked], 10_000);
      assert.deepEqual(left, []);
      for (const pid of [theirs.worker, theirs.spare, theirs.parked]) assert.ok(isAlive(pid));
      assert.ok(t.logs.some((l) => l.event === 'key_clis_retired' && l.reason === 'expired'));
    } finally {
      await t.close();
    }
  });
});

/** Samples the fake CLIs alive under /proc every few ms until stopped; returns the most seen at once. */
function sampleProcs(t: TestDaemon): { stop(): number } {
  let most = 0;
  const timer = setInterval(() => {
    const now = fakeCliProcesses(t.recordDir);
    most = Math.max(most, now.length);
  }, 15);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(most, fakeCliProcesses(t.recordDir).length);
    },
  };
}

async function health(t: TestDaemon): Promise<{ processes: { live: number; max: number; waiting: number } }> {
  return (await (await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as {
    processes: { live: number; max: number; waiting: number };
  };
}

describe('parked tool-call turns are bounded', () => {
  it('a --concurrency 1 key that leaves 12 tool calls unanswered holds one CLI: each newer request retires the older park', async () => {
    const t = await startTestDaemon();
    try {
      const kid = t.daemon.store.keys.add('kid', 'member', { concurrency: 1 }).token;
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: kid, maxRetries: 0 });
      const sampler = sampleProcs(t);
      let last: { messages: Msg[]; reply: OpenAI.ChatCompletion } | undefined;
      for (let i = 0; i < 12; i++) {
        const messages: Msg[] = [asking(`city ${i}`)];
        const reply: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
          messages,
          tools: [WEATHER],
        });
        assert.equal(reply.choices[0]!.finish_reason, 'tool_calls', `request ${i} is admitted, not refused`);
        last = { messages, reply };
      }
      // One parked CLI, and at most one more on its way out at any moment.
      assert.ok(sampler.stop() <= 2, 'never more than the parked turn and one being retired');
      await waitFor(() => fakeCliProcesses(t.recordDir).length === 1);
      assert.equal(
        t.logs.filter((l) => l.event === 'parked_turn_retired' && l.reason === 'key_concurrency').length,
        11,
      );
      // The newest park is still this key's to continue, on the same process.
      const parkedPid = fakeCliProcesses(t.recordDir)[0]!;
      const call = last!.reply.choices[0]!.message;
      const answer = await client.chat.completions.create({
        model: 'sonnet',
        messages: [...last!.messages, call, { role: 'tool', tool_call_id: call.tool_calls![0]!.id, content: 'sunny' }],
        tools: [WEATHER],
      });
      assert.equal(answer.choices[0]!.message.content, 'echo: sunny');
      await waitFor(() => t.logs.filter((l) => l.event === 'request').length === 13);
      assert.equal(t.logs.filter((l) => l.event === 'request').at(-1)!.run, 'parked');
      await waitGone([parkedPid]);
    } finally {
      await t.close();
    }
  });

  it('a park whose conversation moved past its results (more after them) is retired by that request', async () => {
    const t = await startTestDaemon();
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [asking('Oslo')];
      const reply: OpenAI.ChatCompletion = await client.chat.completions.create({
        model: 'sonnet',
        messages,
        tools: [WEATHER],
      });
      const parkedPid = fakeCliProcesses(t.recordDir)[0]!;
      const call = reply.choices[0]!.message;
      messages.push(
        call,
        { role: 'tool', tool_call_id: call.tool_calls![0]!.id, content: 'snow' },
        { role: 'user', content: 'and never mind that' },
      );
      const next = await client.chat.completions.create({ model: 'sonnet', messages });
      assert.equal(next.choices[0]!.finish_reason, 'stop');
      assert.deepEqual(await waitGone([parkedPid], 15_000), [], 'the park was never going to be continued');
      assert.ok(t.logs.some((l) => l.event === 'parked_turn_retired' && l.reason === 'superseded'));
    } finally {
      await t.close();
    }
  });

  it('--max-processes bounds parked turns of a key without a limit: the oldest park makes room', async () => {
    const t = await startTestDaemon({ config: { maxProcesses: 3 } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const sampler = sampleProcs(t);
      for (let i = 0; i < 10; i++) {
        const reply: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
          messages: [asking(`town ${i}`)],
          tools: [WEATHER],
        });
        assert.equal(reply.choices[0]!.finish_reason, 'tool_calls');
      }
      assert.ok(sampler.stop() <= 3, 'never more CLIs than the cap, counted under /proc');
      assert.equal((await health(t)).processes.max, 3);
      assert.ok(t.logs.filter((l) => l.event === 'parked_turn_retired' && l.reason === 'process_cap').length >= 7);
    } finally {
      await t.close();
    }
  });
});

describe('fair shares of the process cap', () => {
  it("a member flooding --max-processes with unanswered tool calls does not keep the owner's request behind its own", async (ctx) => {
    const t = await startTestDaemon({ config: { maxProcesses: 3, maxConcurrency: 16, sessions: false } });
    try {
      const flood = new OpenAI({
        baseURL: t.baseURL,
        apiKey: t.daemon.store.keys.add('flood', 'member', {}).token,
        maxRetries: 0,
      });
      const owner = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const done: string[] = [];
      const ask = (i: number) =>
        flood.chat.completions
          .create({ model: 'sonnet', messages: [asking(`city ${i}`)], tools: [WEATHER] })
          .then((r) => {
            assert.equal(r.choices[0]!.finish_reason, 'tool_calls');
            done.push('flood');
          });
      // The flood parks three (the cap), then twelve more of its turns wait for room.
      await Promise.all([0, 1, 2].map(ask));
      const more = Array.from({ length: 12 }, (_, i) => ask(3 + i));
      await waitFor(async () => (await health(t)).processes.waiting >= 6);
      const started = performance.now();
      const reply = await owner.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'hi' }],
      });
      const waited = performance.now() - started;
      done.push('owner');
      assert.equal(reply.choices[0]!.finish_reason, 'stop');
      await Promise.all(more);
      ctx.diagnostic(`the owner's request took ${Math.round(waited)} ms behind the flood`);
      // Seated at the first room that freed (the flood's turns seated at once may finish first).
      assert.ok(done.indexOf('owner') < done.length - 6, `the owner's request went ahead of the flood: ${done}`);
      assert.ok(t.logs.filter((l) => l.event === 'parked_turn_retired').length >= 12);
    } finally {
      await t.close();
    }
  });
});

describe('one cap on every CLI process', () => {
  it("the CLIs' status checks behind /health count too: at the cap they are not run, and /health says so", async () => {
    const t = await startTestDaemon({ config: { maxProcesses: 2 } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      // Two parked tool-call turns hold the two CLIs olp may have.
      const first = await client.chat.completions.create({
        model: 'sonnet',
        messages: [asking('Oslo')],
        tools: [WEATHER],
      });
      const second = await client.chat.completions.create({
        model: 'sonnet',
        messages: [asking('Rome')],
        tools: [WEATHER],
      });
      const sampler = sampleProcs(t);
      const full = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as {
        backends: Record<string, { unchecked?: string; found: boolean }>;
        processes: { live: number; max: number; waiting: number };
      };
      assert.equal(full.backends.claude?.unchecked, 'process_cap', 'no room: the status check was not run');
      assert.equal(full.backends.claude?.found, true);
      assert.deepEqual(full.processes, { live: 2, max: 2, waiting: 0 });
      assert.ok(sampler.stop() <= 2, 'never more CLIs than the cap under /proc, status checks included');
      // Room again (both parked turns answered and finished): the next /health runs the check.
      for (const [city, reply] of [
        ['Oslo', first],
        ['Rome', second],
      ] as const) {
        const call = reply.choices[0]!.message;
        await client.chat.completions.create({
          model: 'sonnet',
          messages: [asking(city), call, { role: 'tool', tool_call_id: call.tool_calls![0]!.id, content: 'snow' }],
          tools: [WEATHER],
        });
      }
      await waitFor(async () => (await health(t)).processes.live === 0);
      const again = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as {
        backends: Record<string, { unchecked?: string; version: string | null }>;
      };
      assert.equal(again.backends.claude?.unchecked, undefined);
      assert.ok(again.backends.claude?.version, 'checked: the version is known');
    } finally {
      await t.close();
    }
  });

  it('under load with more conversations than session slots, /proc never counts more CLIs than --max-processes, and /health and /metrics agree with /proc', async () => {
    const t = await startTestDaemon({
      config: {
        workers: true,
        prestart: true,
        // Two slots, growing with the key's conversations: idle workers fill the cap, and a turn
        // waiting for room gets one of them retired once its own turn ended.
        sessionPool: 2,
        maxProcesses: 4,
        maxWorkers: 8,
        maxConcurrency: 8,
        metrics: 'owner',
      },
    });
    try {
      const sampler = sampleProcs(t);
      let healthMost = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          healthMost = Math.max(healthMost, (await health(t)).processes.live);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      // Six conversations at once on three session slots per backend... of one key, four turns each,
      // and two agents leaving tool calls unanswered.
      const conversations = Array.from({ length: 6 }, async (_, c) => {
        const messages: Msg[] = [{ role: 'system', content: `conversation ${c}` }];
        for (let turn = 0; turn < 4; turn++) {
          messages.push({ role: 'user', content: `turn ${turn} of ${c}` });
          const r = await client.chat.completions.create({ model: 'sonnet', messages });
          messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
        }
      });
      const agents = Array.from({ length: 2 }, async (_, a) => {
        for (let i = 0; i < 3; i++)
          await client.chat.completions.create({
            model: 'sonnet',
            messages: [asking(`agent ${a} ${i}`)],
            tools: [WEATHER],
          });
      });
      await Promise.all([...conversations, ...agents]);
      watching = false;
      await watcher;
      const most = sampler.stop();
      assert.ok(most <= 4, `at most 4 CLI processes under /proc, saw ${most}`);
      assert.ok(healthMost <= 4, `and /health said at most 4, said ${healthMost}`);
      // Quiet again: olp's figures are what /proc shows.
      await waitFor(async () => {
        const procs = fakeCliProcesses(t.recordDir).length;
        const h = (await health(t)).processes.live;
        const m = /^olp_cli_processes (\d+)$/m.exec(
          await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.token}` } })).text(),
        );
        return procs > 0 && h === procs && Number(m?.[1]) === procs;
      });
    } finally {
      await t.close();
    }
  });
});
