// The client's functions on a live `codex app-server` (the real pinned binary) against a loopback
// stand-in for the Responses API: olp's MCP bridge bound to the thread in thread/resume's config
// (the token as a header on stdin), one tool call that waits at the bridge until olp provides the
// result, then the turn's end and the thread's next turn on the same process.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createCodexParser } from '../../src/backends/index.js';
import { toCodexInvocation } from '../../src/backends/codex/invocation.js';
import {
  appServerReady,
  createTurnIds,
  toAppServerInvocation,
  toTurnStart,
} from '../../src/backends/codex/live-invocation.js';
import { createAppServerParser } from '../../src/backends/codex/live.js';
import type { BackendEvent, EventParser, Place, Prepared, Turn } from '../../src/backends/index.js';
import { createLogger } from '../../src/log/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { createToolBridge, type ToolBridge } from '../../src/tools/index.js';
import { REAL_CODEX } from '../support/paths.js';
import { isAlive } from '../support/procs.js';
import {
  codexStandInConfig,
  CODEX_STAND_IN_ENV,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../support/responses-stand-in.js';

const present = existsSync(REAL_CODEX);
const exit = (): ExitInfo => ({ reason: 'exit', exitCode: 0, signal: null, stderr: '', pid: 1, durationMs: 10 });
const WEATHER = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

let api: ResponsesStandIn;
let bridge: ToolBridge;
let dir: string;

before(async () => {
  if (!present) return;
  api = await startResponsesStandIn();
  bridge = createToolBridge(createLogger('error', new Writable({ write: (_c, _e, cb) => cb() })));
  await bridge.start();
  dir = mkdtempSync(join(tmpdir(), 'olp-codex-live-tools-real-'));
});
after(async () => {
  await bridge?.close();
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Spawns a prepared invocation in the place (its files written); stdout line by line, stdin open. */
function start(prepared: Prepared, place: Place, env: Record<string, string>) {
  for (const f of prepared.files) {
    mkdirSync(dirname(place.path(f.name)), { recursive: true });
    writeFileSync(place.path(f.name), f.content);
  }
  const child: ChildProcessWithoutNullStreams = spawn(prepared.invocation.command, prepared.invocation.args, {
    cwd: place.cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stderr.resume();
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
  child.stdin.write(prepared.invocation.stdin ?? '');
  async function next(ms: number): Promise<string | undefined> {
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
  /** Reads into the parser until `until` holds; undefined when nothing came for `ms`. */
  async function read(parser: EventParser, until: () => boolean, ms = 30_000): Promise<BackendEvent[] | undefined> {
    const events: BackendEvent[] = [];
    while (!until()) {
      const line = await next(ms);
      if (line === undefined) return undefined;
      events.push(...parser.push(line));
    }
    return events;
  }
  return { child, next, read };
}

const textOf = (events: BackendEvent[]) =>
  events
    .filter((e): e is Extract<BackendEvent, { type: 'text' }> => e.type === 'text')
    .map((e) => e.text)
    .join('');

describe('real codex app-server with the client’s functions', { skip: !present && `no codex at ${REAL_CODEX}` }, () => {
  it('thread/resume binds olp’s bridge; a call waits there until olp provides the result; the next turn runs on the same process', async () => {
    const place: Place = {
      home: join(dir, 'home'),
      persistent: join(dir, 'persistent'),
      cwd: join(dir, 'cwd'),
      path: (name) => join(dir, name),
    };
    for (const d of [join(place.home, '.codex'), place.cwd]) mkdirSync(d, { recursive: true });
    const env = { HOME: place.home, CODEX_HOME: join(place.home, '.codex'), NO_COLOR: '1', ...CODEX_STAND_IN_ENV };
    const config = codexStandInConfig(api.url);

    // A cold exec turn makes the thread, as olp's first turn of a conversation does.
    const cold: Turn = {
      prompt: { text: 'first question', system: null } as unknown as Turn['prompt'],
      cliModel: 'codex',
      session: { mode: 'fresh', slot: 0 },
    };
    const exec = start(toCodexInvocation(REAL_CODEX, cold, place, config), place, env);
    exec.child.stdin.end();
    const coldParser = createCodexParser();
    await exec.read(coldParser, () => coldParser.complete);
    const threadId = coldParser.finish(exit()).sessionId;
    assert.ok(threadId, 'the cold turn made a thread');

    const s = bridge.open([WEATHER]);
    const tools = { specs: [WEATHER], url: s.url, endpoint: s.endpoint, token: s.token, timeoutMs: 60_000 };
    const prepared = toAppServerInvocation(
      REAL_CODEX,
      { ...cold, session: { mode: 'resumed', sessionId: threadId, slot: 0 }, tools },
      place,
      config,
    );
    assert.ok(prepared.invocation.args.every((a) => !a.includes(s.token)));
    const app = start(prepared, place, env);
    try {
      let ready: boolean | undefined;
      while (ready === undefined) {
        const line = await app.next(30_000);
        assert.ok(line !== undefined, 'the app-server answers the resume');
        ready = appServerReady(line);
      }
      assert.equal(ready, true);
      const ids = createTurnIds();

      api.toolCalls = [{ name: 'get_weather', arguments: { city: 'Paris' } }];
      const requests = api.requests.length;
      app.child.stdin.write(toTurnStart(ids, { text: 'weather in Paris?' }, threadId));
      const parser = createAppServerParser();
      const asked = await app.read(parser, () => (parser.toolStep?.calls.length ?? 0) === 1);
      assert.ok(asked, 'the call was reported');
      const call = parser.toolStep!.calls[0]!;
      assert.deepEqual([call.name, JSON.parse(call.arguments)], ['get_weather', { city: 'Paris' }]);
      assert.match(
        JSON.stringify(api.requests[requests]?.input),
        /"name":"mcp__olp"/,
        'the model was offered the function in olp’s namespace',
      );
      s.expect([call], { exact: true });
      for (let i = 0; i < 500 && s.waiting.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(s.waiting, [{ toolUseId: call.id, name: 'get_weather' }], 'codex waits at the bridge');
      // Parked: the turn does not end without the result.
      await app.read(parser, () => parser.complete, 500);
      assert.equal(parser.complete, false);

      parser.continueAfterTools!();
      s.provide(new Map([[call.id, 'sunny in Paris']]));
      const rest = await app.read(parser, () => parser.complete);
      assert.ok(rest, 'the turn went on to turn/completed');
      assert.equal(textOf(rest), 'responses stand-in got: sunny in Paris');
      const first = parser.finish(exit());
      assert.equal(first.ok, true);
      assert.ok((first.usage?.promptTokens ?? 0) > 0);

      api.toolCalls = undefined;
      app.child.stdin.write(toTurnStart(ids, { text: 'and tomorrow?' }, threadId));
      const second = createAppServerParser();
      const events = await app.read(second, () => second.complete);
      assert.ok(events, 'the next turn ended');
      assert.equal(second.toolStep, undefined);
      assert.equal(second.finish(exit()).ok, true);
      assert.ok(isAlive(app.child.pid!), 'one app-server for both turns');
    } finally {
      api.toolCalls = undefined;
      app.child.stdin.end();
      app.child.kill();
      s.close();
    }
  });
});
