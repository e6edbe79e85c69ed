// The client's functions on a live codex app-server: olp's MCP server bound to the thread in
// thread/resume's config, the app-server's mcpToolCall items read as tool calls (an open step the
// run stage parks on), and the fake app-server driven through a real olp tool bridge.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { createCodexParser } from '../../src/backends/index.js';
import {
  appServerReady,
  createTurnIds,
  toAppServerInvocation,
  toTurnStart,
} from '../../src/backends/codex/live-invocation.js';
import { createAppServerParser } from '../../src/backends/codex/live.js';
import type { BackendEvent, EventParser, Place, Turn } from '../../src/backends/index.js';
import { createLogger } from '../../src/log/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { createToolBridge } from '../../src/tools/index.js';
import { FAKE_CODEX, REFERENCE } from '../support/paths.js';
import { isAlive } from '../support/procs.js';

const exit = (): ExitInfo => ({ reason: 'exit', exitCode: 0, signal: null, stderr: '', pid: 1, durationMs: 10 });

const place = (dir: string): Place => ({
  home: join(dir, 'home'),
  persistent: join(dir, 'persistent'),
  cwd: join(dir, 'cwd'),
  path: (name) => join(dir, name),
});

const WEATHER = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const WEATHER_CALL = { name: 'get_weather', arguments: { city: 'Paris' } };
const TOKEN = 'tok_0123456789abcdefghijklmnop';
const tools: NonNullable<Turn['tools']> = {
  specs: [WEATHER],
  url: `http://127.0.0.1:9/mcp/${TOKEN}`,
  endpoint: 'http://127.0.0.1:9/mcp',
  token: TOKEN,
  timeoutMs: 600_500,
};
const turn = (extra: Partial<Turn> = {}): Turn => ({
  prompt: { text: '', system: null } as unknown as Turn['prompt'],
  cliModel: 'codex',
  session: { mode: 'resumed', sessionId: 'thread-1', slot: 0 },
  ...extra,
});

/** The JSON lines an app-server invocation writes on stdin. */
const stdinLines = (stdin: string | undefined) =>
  (stdin ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id?: string; method: string; params?: Record<string, unknown> });

describe('codex app-server invocation with the client’s functions', () => {
  it('thread/resume binds olp’s MCP server to the thread (the exec settings, the token as a header on stdin)', () => {
    const { invocation } = toAppServerInvocation('codex', turn({ tools }), place('/w'), ['model="x"']);
    const resume = stdinLines(invocation.stdin).find((l) => l.method === 'thread/resume')!;
    assert.deepEqual(resume.params?.config, {
      mcp_servers: {
        olp: {
          url: 'http://127.0.0.1:9/mcp',
          http_headers: { Authorization: `Bearer ${TOKEN}` },
          required: true,
          default_tools_approval_mode: 'approve',
          supports_parallel_tool_calls: true,
          omit_tools_from: ['code_mode'],
          tool_timeout_sec: 601,
        },
      },
    });
    assert.ok(
      invocation.args.every((a) => !a.includes(TOKEN) && !a.includes('mcp_servers')),
      'nothing of the server, and never the token, in argv',
    );
  });

  it('no functions, no MCP config', () => {
    const { invocation } = toAppServerInvocation('codex', turn(), place('/w'), []);
    const resume = stdinLines(invocation.stdin).find((l) => l.method === 'thread/resume')!;
    assert.equal(resume.params?.config, undefined);
    assert.ok(!invocation.stdin?.includes('mcp_servers'));
  });

  it('a resume the required server failed is not ready (0.171’s answer, captured with the server unreachable)', () => {
    // codex 0.171 puts the id after the error.
    const failed =
      '{"error":{"code":-32603,"message":"error resuming thread: Fatal error: Failed to initialize session: required MCP servers failed to initialize: olp: handshaking with MCP server failed: Send message error Transport [...] error: Client error: HTTP request failed: http/request failed: error sending request for url (http://127.0.0.1:1/mcp), when send initialize request"},"id":"olp-resume"}';
    assert.equal(appServerReady(failed), false);
    const capture = readFileSync(join(REFERENCE, 'codex-0.171.0-app-server-mcp-tool-calls-parallel.jsonl'), 'utf8');
    const ok = capture.split('\n').find((l) => l.startsWith('{"id":"olp-resume"'))!;
    assert.equal(appServerReady(ok), true);
    assert.equal(
      appServerReady(capture.split('\n').find((l) => l.includes('mcpServer/startupStatus/updated'))!),
      undefined,
    );
  });
});

/** The events' calls as [index, name, arguments] and their ids. */
function callsOf(events: BackendEvent[]): { calls: [number, string, string][]; ids: string[] } {
  const calls: [number, string, string][] = [];
  const ids: string[] = [];
  for (const e of events) {
    if (e.type === 'tool_call') {
      calls[e.index] = [e.index, e.name, ''];
      ids.push(e.id);
    } else if (e.type === 'tool_args') calls[e.index]![2] += e.text;
  }
  return { calls, ids };
}

const textOf = (events: BackendEvent[]) =>
  events
    .filter((e): e is Extract<BackendEvent, { type: 'text' }> => e.type === 'text')
    .map((e) => e.text)
    .join('');

describe('codex app-server parser: calls of olp’s MCP server (captured, codex 0.171 + stand-in)', () => {
  const lines = readFileSync(join(REFERENCE, 'codex-0.171.0-app-server-mcp-tool-calls-parallel.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  const firstEnd = lines.findIndex((l) => l.includes('"turn/completed"'));
  // The turn waits on its calls once both have started: the run stage parks there.
  const parkedAt = lines.findLastIndex((l, i) => i < firstEnd && l.includes('"item/started"'));

  it('two parallel calls: tool events, an open step of both; the turn goes on after continueAfterTools', () => {
    const parser = createAppServerParser();
    const before = lines.slice(0, parkedAt + 1).flatMap((l) => parser.push(l));
    const { calls, ids } = callsOf(before);
    // codex started Oslo's call first.
    assert.deepEqual(calls, [
      [0, 'get_weather', '{"city":"Oslo"}'],
      [1, 'get_weather', '{"city":"Paris"}'],
    ]);
    assert.equal(new Set(ids).size, 2);
    for (const id of ids) assert.match(id, /^call_[A-Za-z0-9_-]{16}$/);
    assert.deepEqual(before[0], { type: 'session', sessionId: '01a24156-d800-7352-8358-79a6868e0f78' });
    assert.equal(parser.complete, false);
    assert.deepEqual(parser.toolStep, {
      calls: [
        { id: ids[0], name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { id: ids[1], name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      usage: null,
      open: true,
    });
    parser.continueAfterTools!();
    assert.equal(parser.toolStep, undefined);
    const rest = lines.slice(parkedAt + 1, firstEnd + 1).flatMap((l) => parser.push(l));
    assert.deepEqual(callsOf(rest).calls, [], 'the calls’ completion is no new call');
    assert.equal(textOf(rest), 'responses stand-in got: sunny in Paris | snow in Oslo');
    assert.equal(parser.complete, true);
    assert.equal(parser.toolStep, undefined);
    const outcome = parser.finish(exit());
    assert.equal(outcome.ok, true);
    // The thread's running total after both of the turn's requests (the session layer rebases it).
    assert.deepEqual([outcome.usage?.promptTokens, outcome.usage?.completionTokens], [3600, 36]);
  });

  it('the thread’s next turn on the same process: a plain answer, no step', () => {
    const parser = createAppServerParser();
    const events = lines.slice(firstEnd + 1).flatMap((l) => parser.push(l));
    assert.deepEqual(callsOf(events).calls, []);
    assert.equal(parser.toolStep, undefined);
    assert.equal(textOf(events), 'responses stand-in got: sunny in Paris | snow in Oslo');
    assert.equal(parser.finish(exit()).ok, true);
  });
});

/** app-server notifications of one turn, in 0.171's shapes. */
const T = 'turn-a';
const note = (method: string, params: Record<string, unknown>) =>
  JSON.stringify({ method, params: { threadId: 'th', ...params } });
const mcpItem = (id: string, city: string, server = 'olp') =>
  note('item/started', {
    turnId: T,
    item: { type: 'mcpToolCall', id, server, tool: 'get_weather', status: 'inProgress', arguments: { city } },
  });

describe('codex app-server parser: tool steps, retries', () => {
  it('a retry after a call started keeps the call and what came before it (codex makes the call and keeps it)', () => {
    const parser = createAppServerParser();
    const first = [
      note('turn/started', { turn: { id: T } }),
      note('item/agentMessage/delta', { turnId: T, itemId: 'm1', delta: 'Checking.' }),
      mcpItem('call_1_0', 'Paris'),
      note('item/agentMessage/delta', { turnId: T, itemId: 'm2', delta: 'Still' }),
    ].flatMap((l) => parser.push(l));
    assert.equal(callsOf(first).calls.length, 1);
    const retry = parser.push(note('error', { turnId: T, willRetry: true, error: { message: 'Reconnecting... 1/5' } }));
    assert.deepEqual(retry, [
      { type: 'abandoned', text: '\n\nStill', events: 1 },
      { type: 'retry', message: 'Reconnecting... 1/5' },
    ]);
    assert.deepEqual(parser.toolStep?.calls, [
      { id: callsOf(first).ids[0], name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    // A second call of the retried request joins the step.
    const oslo = parser.push(mcpItem('call_2_0', 'Oslo'));
    assert.deepEqual(
      oslo.map((e) => [e.type, (e as { index: number }).index]),
      [
        ['tool_call', 1],
        ['tool_args', 1],
      ],
    );
    assert.equal((parser as EventParser).toolStep?.calls.length, 2);
  });

  it('a retry after the turn went on takes back only what came since; the earlier step’s text stays separated', () => {
    const parser = createAppServerParser();
    [
      note('turn/started', { turn: { id: T } }),
      note('item/agentMessage/delta', { turnId: T, itemId: 'm1', delta: 'Checking.' }),
      mcpItem('call_1_0', 'Paris'),
    ].forEach((l) => parser.push(l));
    parser.continueAfterTools!();
    parser.push(note('item/agentMessage/delta', { turnId: T, itemId: 'm2', delta: 'Sun' }));
    assert.deepEqual(parser.push(note('error', { turnId: T, willRetry: true, error: { message: 'r' } }))[0], {
      type: 'abandoned',
      text: '\n\nSun',
      events: 1,
    });
    assert.deepEqual(parser.push(note('item/agentMessage/delta', { turnId: T, itemId: 'm3', delta: 'Sunny.' })), [
      { type: 'text', text: '\n\nSunny.' },
    ]);
  });

  it('only olp’s calls of this turn, each once', () => {
    const parser = createAppServerParser();
    const events = [
      note('turn/started', { turn: { id: T } }),
      mcpItem('x', 'Paris', 'other'),
      mcpItem('c1', 'Paris'),
      mcpItem('c1', 'Paris'),
      note('item/started', {
        turnId: 'another-turn',
        item: { type: 'mcpToolCall', id: 'c2', server: 'olp', tool: 'get_weather', arguments: {} },
      }),
    ].flatMap((l) => parser.push(l));
    assert.deepEqual(callsOf(events).calls, [[0, 'get_weather', '{"city":"Paris"}']]);
  });
});

/** The reference capture's lines. */
const captured = (file: string) => readFileSync(join(REFERENCE, file), 'utf8').split('\n').filter(Boolean);

describe('codex 0.171: the stream cut after the model’s call was complete (captured against a cutting stand-in)', () => {
  // codex makes the call of the broken attempt, waits for its result, then says it reconnects and
  // asks again with the call and its result in the input: the call is the turn's.
  it('app-server: the step parks on the call; the retry after the results takes nothing back', () => {
    const lines = captured('codex-0.171.0-app-server-cut-after-tool-call-retried.jsonl');
    const end = lines.findIndex((l) => l.includes('"turn/completed"'));
    const at = lines.findIndex((l) => l.includes('"item/started"') && l.includes('mcpToolCall'));
    const parser = createAppServerParser();
    const before = lines.slice(0, at + 1).flatMap((l) => parser.push(l));
    assert.deepEqual(callsOf(before).calls, [[0, 'get_weather', '{"city":"Paris2"}']]);
    parser.continueAfterTools!();
    const after = lines.slice(at + 1, end + 1).flatMap((l) => parser.push(l));
    assert.deepEqual(
      after.filter((e) => e.type !== 'text'),
      [{ type: 'retry', message: 'Reconnecting... 1/2' }],
    );
    assert.match(textOf(after), /^got: .*sunny in Paris2/);
    assert.equal(parser.finish(exit()).ok, true);
  });

  for (const parked of [true, false])
    it(`exec${parked ? '' : ', read straight through'}: the call stays the turn’s, the retried answer follows`, () => {
      const lines = captured('codex-0.171.0-exec-json-cut-after-tool-call-retried.jsonl');
      const parser = createCodexParser();
      const events: BackendEvent[] = [];
      for (const l of lines) {
        events.push(...parser.push(l));
        if (parked && l.includes('"item.started"')) parser.continueAfterTools!();
      }
      assert.deepEqual(
        events.filter((e) => e.type === 'abandoned'),
        [],
      );
      assert.deepEqual(callsOf(events).calls, [[0, 'get_weather', '{"city":"Paris1"}']]);
      assert.equal(parser.toolStep?.calls.length, parked ? undefined : 1);
      assert.match(textOf(events), /^got: .*sunny in Paris1/);
      assert.equal(parser.finish(exit()).ok, true);
    });
});

/** A spawned app-server: its stdout lines one at a time, its stdin open. */
function startAppServer(prepared: ReturnType<typeof toAppServerInvocation>, cwd: string, env: Record<string, string>) {
  const child: ChildProcessWithoutNullStreams = spawn(prepared.invocation.command, prepared.invocation.args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stdin.write(prepared.invocation.stdin ?? '');
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  createInterface({ input: child.stdout }).on('line', (l) => {
    queue.push(l);
    wake?.();
  });
  child.stdout.on('close', () => {
    closed = true;
    wake?.();
  });
  async function next(ms = 10_000): Promise<string | undefined> {
    const deadline = Date.now() + ms;
    while (queue.length === 0 && !closed) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((r) => {
        wake = r;
        timer = setTimeout(r, left);
      });
      clearTimeout(timer);
      wake = undefined;
    }
    return queue.shift();
  }
  return { child, next };
}

type AppServer = ReturnType<typeof startAppServer>;

/** Reads into the parser until `until` holds; undefined when the app-server went quiet for `ms`. */
async function readUntil(
  app: AppServer,
  parser: EventParser,
  until: () => boolean,
  ms = 10_000,
): Promise<BackendEvent[] | undefined> {
  const events: BackendEvent[] = [];
  while (!until()) {
    const line = await app.next(ms);
    if (line === undefined) return undefined;
    events.push(...parser.push(line));
  }
  return events;
}

describe('the fake app-server through a real olp tool bridge', () => {
  const dir = mkdtempSync(join(tmpdir(), 'olp-codex-live-tools-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const logger = createLogger('error', new Writable({ write: (_c, _e, cb) => cb() }));

  /** A thread a cold exec turn left: its rollout in the run's CODEX_HOME. */
  function coldThread(id: string): Place {
    const p = place(join(dir, id));
    for (const d of [p.home, p.cwd]) mkdirSync(d, { recursive: true });
    mkdirSync(join(p.home, '.codex', 'sessions'), { recursive: true });
    const usage = {
      input_tokens: 100,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      output_tokens: 10,
      reasoning_output_tokens: 0,
    };
    writeFileSync(
      join(p.home, '.codex', 'sessions', `rollout-${id}.jsonl`),
      `${JSON.stringify({ type: 'turn', prompt: 'hi', reply: 'hello', usage })}\n`,
    );
    return p;
  }
  const envOf = (p: Place, records: string) => ({
    HOME: p.home,
    CODEX_HOME: join(p.home, '.codex'),
    FAKE_CODEX_RECORD_DIR: records,
  });

  it('one tool round parks the turn on the bridge, the results finish it, and the next turn runs on the same process', async () => {
    const bridge = createToolBridge(logger);
    await bridge.start();
    const records = join(dir, 'records-a');
    mkdirSync(records);
    const p = coldThread('thread-a');
    const s = bridge.open([WEATHER]);
    const prepared = toAppServerInvocation(
      FAKE_CODEX,
      turn({
        session: { mode: 'resumed', sessionId: 'thread-a', slot: 0 },
        tools: { specs: [WEATHER], url: s.url, endpoint: s.endpoint, token: s.token, timeoutMs: 60_000 },
      }),
      p,
      [],
    );
    const app = startAppServer(prepared, p.cwd, envOf(p, records));
    try {
      let ready: boolean | undefined;
      while (ready === undefined) {
        const line = await app.next();
        assert.ok(line !== undefined, 'the app-server answers the resume');
        ready = appServerReady(line);
      }
      assert.equal(ready, true);
      const ids = createTurnIds();

      // Turn 1: the model calls the function twice in parallel; codex waits on the bridge.
      const calls = [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_weather', arguments: { city: 'Oslo' } },
      ];
      app.child.stdin.write(toTurnStart(ids, { text: `weather? [[fake-tools:${JSON.stringify(calls)}]]` }, 'thread-a'));
      const parser = createAppServerParser();
      const asked = await readUntil(app, parser, () => (parser.toolStep?.calls.length ?? 0) === 2);
      assert.ok(asked, 'both calls reported');
      assert.deepEqual(
        callsOf(asked).calls.map((c) => c[2]),
        ['{"city":"Paris"}', '{"city":"Oslo"}'],
      );
      s.expect(parser.toolStep!.calls, { exact: true });
      for (let i = 0; i < 250 && s.waiting.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(s.waiting.length, 2, 'both calls wait at the bridge');
      assert.equal(s.unasked, 0);
      // Parked: the turn says nothing more until the results come.
      assert.equal(await readUntil(app, parser, () => parser.complete, 300), undefined);
      assert.equal(parser.complete, false);

      const [paris, oslo] = parser.toolStep!.calls.map((c) => c.id);
      parser.continueAfterTools!();
      s.provide(
        new Map([
          [paris!, 'sunny in Paris'],
          [oslo!, 'snow in Oslo'],
        ]),
      );
      const rest = await readUntil(app, parser, () => parser.complete);
      assert.ok(rest, 'the turn went on to turn/completed');
      assert.equal(textOf(rest), 'echo: sunny in Paris | snow in Oslo');
      assert.deepEqual(callsOf(rest).calls, []);
      const first = parser.finish(exit());
      assert.equal(first.ok, true);
      assert.equal(first.sessionId, 'thread-a');

      // Turn 2 on the same process: a plain answer.
      app.child.stdin.write(toTurnStart(ids, { text: 'and tomorrow?' }, 'thread-a'));
      const second = createAppServerParser();
      const events = await readUntil(app, second, () => second.complete);
      assert.ok(events);
      assert.equal(textOf(events), 'Hello from fake codex. You said: and tomorrow?');
      assert.equal(second.toolStep, undefined);
      assert.equal(second.finish(exit()).ok, true);
      assert.ok(isAlive(app.child.pid!), 'one process served both turns');
      const record = JSON.parse(readFileSync(join(records, `${app.child.pid}.json`), 'utf8')) as { argv: string[] };
      assert.ok(
        record.argv.every((a) => !a.includes(s.token)),
        'the token never on the command line',
      );
    } finally {
      app.child.kill();
      s.close();
      await bridge.close();
    }
  });

  it('the end of stdin while a call waits at the bridge: the app-server exits (as 0.171 does)', async () => {
    const bridge = createToolBridge(logger);
    await bridge.start();
    const records = join(dir, 'records-c');
    mkdirSync(records);
    const p = coldThread('thread-c');
    const s = bridge.open([WEATHER]);
    const prepared = toAppServerInvocation(
      FAKE_CODEX,
      turn({
        session: { mode: 'resumed', sessionId: 'thread-c', slot: 0 },
        tools: { specs: [WEATHER], url: s.url, endpoint: s.endpoint, token: s.token, timeoutMs: 60_000 },
      }),
      p,
      [],
    );
    const app = startAppServer(prepared, p.cwd, envOf(p, records));
    try {
      app.child.stdin.write(
        toTurnStart(createTurnIds(), { text: `[[fake-tools:${JSON.stringify([WEATHER_CALL])}]]` }, 'thread-c'),
      );
      const parser = createAppServerParser();
      assert.ok(await readUntil(app, parser, () => parser.toolStep !== undefined));
      s.expect(parser.toolStep!.calls, { exact: true });
      for (let i = 0; i < 250 && s.waiting.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(s.waiting.length, 1);
      const exited = new Promise<number | null>((r) => app.child.once('exit', (code) => r(code)));
      app.child.stdin.end();
      assert.equal(await exited, 0);
    } finally {
      app.child.kill();
      s.close();
      await bridge.close();
    }
  });

  it('a required server that cannot be reached (a closed session): the resume fails, not ready', async () => {
    const bridge = createToolBridge(logger);
    await bridge.start();
    const records = join(dir, 'records-b');
    mkdirSync(records);
    const p = coldThread('thread-b');
    const s = bridge.open([WEATHER]);
    s.close();
    const prepared = toAppServerInvocation(
      FAKE_CODEX,
      turn({
        session: { mode: 'resumed', sessionId: 'thread-b', slot: 0 },
        tools: { specs: [WEATHER], url: s.url, endpoint: s.endpoint, token: s.token, timeoutMs: 60_000 },
      }),
      p,
      [],
    );
    const app = startAppServer(prepared, p.cwd, envOf(p, records));
    try {
      let ready: boolean | undefined;
      while (ready === undefined) {
        const line = await app.next();
        assert.ok(line !== undefined);
        ready = appServerReady(line);
      }
      assert.equal(ready, false);
    } finally {
      app.child.kill();
      await bridge.close();
    }
  });
});
