// Agent conversations: a tool-using conversation takes a session slot like any other, and the CLI
// that answered its first user turn answers its last: tool round trips park on it, user turns are
// written to it warm, only a different tool set starts another.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startedWorkerIdle, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { fakeCliProcesses, isAlive, leftoverWorkspaces, readRecord, recordedPids } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

const tool = (name: string): OpenAI.ChatCompletionTool => ({
  type: 'function',
  function: {
    name,
    description: `The ${name.replace('get_', '')} in a city`,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
});
const WEATHER = tool('get_weather');
const TIME = tool('get_time');

/** A user turn that makes the fake model call `name` for two cities at once. */
const asking = (i: number, name = 'get_weather'): Msg => ({
  role: 'user',
  content: `Question ${i} [[fake-tools:${JSON.stringify([
    { name, arguments: { city: `Paris${i}` } },
    { name, arguments: { city: `Tokyo${i}` } },
  ])}]]`,
});

const runModes = (t: TestDaemon) =>
  t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions').map((l) => String(l.run ?? '-'));

/** One user turn of an agent: the model's parallel calls, the client's results, the model's answer. */
async function agentTurn(
  client: OpenAI,
  messages: Msg[],
  i: number,
  o: { tools?: OpenAI.ChatCompletionTool[]; name?: string; model?: string } = {},
): Promise<string> {
  const tools = o.tools ?? [WEATHER, TIME];
  const model = o.model ?? 'sonnet';
  messages.push(asking(i, o.name));
  const first = await client.chat.completions.create({ model, messages, tools });
  const ask = first.choices[0]!;
  assert.equal(ask.finish_reason, 'tool_calls');
  const calls = ask.message.tool_calls!.filter((c) => c.type === 'function');
  assert.equal(calls.length, 2);
  messages.push(ask.message);
  for (const c of calls)
    messages.push({
      role: 'tool',
      tool_call_id: c.id,
      content: `${c.function.name} says sunny in ${JSON.parse(c.function.arguments).city}`,
    });
  const answer = await client.chat.completions.create({ model, messages, tools });
  assert.equal(answer.choices[0]!.finish_reason, 'stop');
  const text = answer.choices[0]!.message.content!;
  messages.push({ role: 'assistant', content: text });
  return text;
}

describe('agent conversations on one live CLI', () => {
  it('4 user turns, each with a parallel tool round trip: one claude in all, warm and parked turns', async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'system', content: 'You are an agent.' }];
      for (let i = 1; i <= 4; i++) {
        const text = await agentTurn(client, messages, i);
        assert.equal(text, `echo: get_weather says sunny in Paris${i} | get_weather says sunny in Tokyo${i}`);
      }
      const runs = recordedPids(t.recordDir).runs;
      assert.equal(runs.length, 1, `one claude process in all (no spare for tool turns): ${runs}`);
      await waitFor(() => runModes(t).length === 8);
      assert.deepEqual(runModes(t), ['cold', 'parked', 'warm', 'parked', 'warm', 'parked', 'warm', 'parked']);
      await waitFor(() => [...t.daemon.store.usage.export({ scope: { all: true } })].length === 8);
      const rows = [...t.daemon.store.usage.export({ scope: { all: true } })];
      assert.deepEqual(
        rows.map((r) => r.run_mode),
        ['cold', 'parked', 'warm', 'parked', 'warm', 'parked', 'warm', 'parked'],
      );
      assert.ok(isAlive(runs[0]!), 'the worker waits for the next user turn');
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { pid: number; state: string }[] } };
      assert.deepEqual(
        health.workers.live.map((w) => [w.pid, w.state]),
        [[runs[0], 'idle']],
      );
      // A fifth user turn's calls: the worker waits on them, and /health says so.
      messages.push(asking(5));
      const ask = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER, TIME] });
      assert.equal(ask.choices[0]!.finish_reason, 'tool_calls');
      const parked = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { pid: number; state: string }[] } };
      assert.deepEqual(
        parked.workers.live.map((w) => [w.pid, w.state]),
        [[runs[0], 'parked']],
      );
    } finally {
      await t.close(true);
    }
    for (const pid of recordedPids(t.recordDir).runs) assert.ok(!isAlive(pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('codex: the first user turn runs codex exec, the app-server that follows it takes the next ones with the same tools', async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [{ role: 'system', content: 'You are an agent.' }];
      const appServers = () =>
        recordedPids(t.recordDir).runs.filter((p) => readRecord(t.recordDir, p).argv[0] === 'app-server');
      for (let i = 1; i <= 4; i++) {
        // The app-server is up before the next turn (a turn that comes first runs cold instead).
        if (i === 2) await startedWorkerIdle(t);
        const text = await agentTurn(client, messages, i, { model: 'codex' });
        assert.equal(text, `echo: get_weather says sunny in Paris${i} | get_weather says sunny in Tokyo${i}`);
      }
      const runs = recordedPids(t.recordDir).runs;
      assert.equal(runs.length, 2, 'codex exec for the first user turn, one app-server for the rest');
      assert.equal(appServers().length, 1);
      const argv = readRecord(t.recordDir, appServers()[0]!).argv.join(' ');
      assert.ok(!/[A-Za-z0-9_-]{32}/.test(argv.replace(/[0-9a-f-]{36}/g, '')), 'no bridge token in argv');
      await waitFor(() => runModes(t).length === 8);
      assert.deepEqual(runModes(t), ['cold', 'parked', 'warm', 'parked', 'warm', 'parked', 'warm', 'parked']);
    } finally {
      await t.close(true);
    }
    for (const pid of recordedPids(t.recordDir).runs) assert.ok(!isAlive(pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('a different tool set is another CLI, resuming the same session; the old set again is another still', async () => {
    const t = await startTestDaemon({ config: { workers: true } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [];
      await agentTurn(client, messages, 1);
      await agentTurn(client, messages, 2);
      assert.equal(recordedPids(t.recordDir).runs.length, 1);
      // Only get_time offered now: the worker that offers both is not used.
      const text = await agentTurn(client, messages, 3, { tools: [TIME], name: 'get_time' });
      assert.equal(text, 'echo: get_time says sunny in Paris3 | get_time says sunny in Tokyo3');
      const runs = recordedPids(t.recordDir).runs;
      assert.equal(runs.length, 2, 'a second process for the new tool set');
      const second = readRecord(t.recordDir, runs[1]!);
      assert.ok(second.argv.includes('--resume'), 'it resumes the conversation’s session');
      assert.ok(
        second.argv.some((a) => a === '--allowedTools=mcp__olp__get_time'),
        second.argv.join(' '),
      );
      assert.ok(!isAlive(runs[0]!), 'the worker with the old tools is retired');
      // It remembers the conversation: the fake answers the tool round trip from its own session.
      await agentTurn(client, messages, 4, { tools: [TIME], name: 'get_time' });
      assert.equal(recordedPids(t.recordDir).runs.length, 2, 'the same tools again: warm on the second');
      await waitFor(() => runModes(t).length === 8);
      assert.deepEqual(runModes(t), ['cold', 'parked', 'warm', 'parked', 'resumed', 'parked', 'warm', 'parked']);
    } finally {
      await t.close(true);
    }
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('the parked CLI gone, its results go to the slot started over with the whole conversation', async () => {
    const t = await startTestDaemon({ config: { workers: true, metrics: 'owner' } });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: Msg[] = [asking(1)];
      const first = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      // The owner sees the parked turn in /health and /metrics.
      const auth = { headers: { authorization: `Bearer ${t.token}` } };
      const health = (await (await fetch(`${t.url}/health`, auth)).json()) as { parked: { turns: number } };
      assert.equal(health.parked.turns, 1);
      assert.match(await (await fetch(`${t.url}/metrics`, auth)).text(), /^olp_parked_turns 1$/m);
      const pid = recordedPids(t.recordDir).runs[0]!;
      process.kill(pid, 'SIGKILL');
      await waitFor(() => !isAlive(pid));
      messages.push(first.choices[0]!.message);
      for (const c of first.choices[0]!.message.tool_calls!)
        messages.push({ role: 'tool', tool_call_id: c.id, content: `result for ${c.id}` });
      const answer = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      assert.equal(answer.choices[0]!.finish_reason, 'stop');
      messages.push({ role: 'assistant', content: answer.choices[0]!.message.content });
      const runs = recordedPids(t.recordDir).runs;
      assert.equal(runs.length, 2, JSON.stringify(runModes(t)));
      const rec = readRecord(t.recordDir, runs[1]!);
      assert.ok(rec.argv.includes('--session-id'), 'a new session for the slot');
      assert.match(rec.stdin ?? '', /<tool_result id="[^"]+" name="get_weather">\nresult for /);
      // The next user turn is warm on the process that answered.
      await agentTurn(client, messages, 2, { tools: [WEATHER] });
      assert.equal(recordedPids(t.recordDir).runs.length, 2, JSON.stringify(runModes(t)));
      await waitFor(() => runModes(t).length === 4);
      assert.deepEqual(runModes(t), ['cold', 'cold', 'warm', 'parked']);
    } finally {
      await t.close(true);
    }
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });

  it('100 unanswered tool calls from two keys never hold more CLIs than the cap; nothing is left after stop', async () => {
    const t = await startTestDaemon({ config: { workers: true, maxProcesses: 4 } });
    let most = 0;
    const timer = setInterval(() => {
      most = Math.max(most, fakeCliProcesses(t.recordDir).length);
    }, 10);
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const member = t.daemon.store.keys.add('agent', 'member', { concurrency: 2 }).token;
      const limited = new OpenAI({ baseURL: t.baseURL, apiKey: member, maxRetries: 0 });
      let answered = 0;
      for (let i = 0; i < 100; i++) {
        // Each a new conversation whose calls are never answered, by turns from a key without a
        // limit and one at --concurrency 2, with two tool sets (two kinds of worker fit).
        const c = i % 2 === 0 ? client : limited;
        const messages: Msg[] = [asking(i, i % 3 === 0 ? 'get_time' : 'get_weather')];
        const r: OpenAI.ChatCompletion = await c.chat.completions.create({
          model: 'sonnet',
          messages,
          tools: [WEATHER, TIME],
        });
        if (r.choices[0]!.finish_reason === 'tool_calls') answered++;
      }
      assert.equal(answered, 100, 'every request got its calls');
      assert.ok(most <= 4, `never more CLIs than --max-processes, counted under /proc (most: ${most})`);
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { parked: { turns: number }; processes: { live: number } };
      assert.ok(health.parked.turns <= 4 && health.processes.live <= 4, JSON.stringify(health));
    } finally {
      clearInterval(timer);
      await t.close(true);
    }
    for (const pid of recordedPids(t.recordDir).runs) assert.ok(!isAlive(pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });
});
