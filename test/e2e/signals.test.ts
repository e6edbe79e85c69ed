// The daemon as a process: SIGTERM with requests in flight, and a crash (SIGKILL) followed by a restart.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { FAKE_CLAUDE, OLP_BIN } from '../support/paths.js';
import { isAlive, leftoverWorkspaces, readRecord, recordedPids, waitGone } from '../support/procs.js';

const base = mkdtempSync(join(tmpdir(), 'olp-signals-'));
after(() => rmSync(base, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  logs: Record<string, unknown>[];
  exited: Promise<number | string | null>;
}

function setup(name: string) {
  const stateDir = join(base, name, 'state');
  const records = join(base, name, 'records');
  mkdirSync(records, { recursive: true });
  const add = spawnSync(process.execPath, [OLP_BIN, 'keys', 'add', 'me', '--state-dir', stateDir], {
    encoding: 'utf8',
  });
  const token = add.stdout.trim().split('\n').at(-1)!;
  return { stateDir, records, token };
}

async function serve(stateDir: string, records: string, grace = 1): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      OLP_BIN,
      'serve',
      '--state-dir',
      stateDir,
      '--port',
      '0',
      '--claude-bin',
      FAKE_CLAUDE,
      '--shutdown-grace',
      String(grace),
      '--idle-timeout',
      '120',
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: base,
        OLP_LOG_FORMAT: 'json',
        OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_RECORD_DIR: records }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => {
    try {
      logs.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  return { child, url, logs, exited };
}

/** The daemon's first log line of this event, waited for: the log is on stderr, the address on stdout, and the two pipes are read independently. */
async function logged(r: Running, event: string): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + 5_000;
  while (!r.logs.some((l) => l.event === event) && Date.now() < deadline)
    await new Promise((res) => setTimeout(res, 20));
  return r.logs.find((l) => l.event === event);
}

/** Starts n requests on a CLI that never answers and waits until all n CLIs have read their prompt. */
async function hang(
  r: Running,
  token: string,
  records: string,
  n: number,
  scenario = 'hang',
): Promise<Promise<number | string>[]> {
  const requests = Array.from({ length: n }, () =>
    fetch(`${r.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: `[[fake:${scenario}]]` }] }),
    }).then(
      (res) => res.status,
      (err: Error) => err.name,
    ),
  );
  const deadline = Date.now() + 10_000;
  const hanging = () =>
    recordedPids(records).runs.filter((pid) => isAlive(pid) && readRecord(records, pid).stdinBytes !== undefined);
  while (hanging().length < n && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  return requests;
}

describe('one olp per state dir', () => {
  it("a second olp serve on a running one's state dir exits at once with one line naming it; the running one's CLIs and workspaces are untouched", async () => {
    const { stateDir, records, token } = setup('second');
    const first = await serve(stateDir, records);
    const post = (content: string, tools = false) =>
      fetch(`${first.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'sonnet',
          messages: [{ role: 'user', content }],
          ...(tools
            ? {
                tools: [
                  {
                    type: 'function',
                    function: {
                      name: 'get_weather',
                      parameters: { type: 'object', properties: { city: { type: 'string' } } },
                    },
                  },
                ],
              }
            : {}),
        }),
      });
    try {
      // A parked tool turn (its CLI waits for the result), a live worker, and a turn in flight (on the
      // spare the worker's turn left, when it was up; else cold beside it).
      const parked = (await (
        await post(
          `Weather? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Paris' } }])}]]`,
          true,
        )
      ).json()) as { choices: { finish_reason: string }[] };
      assert.equal(parked.choices[0]?.finish_reason, 'tool_calls');
      assert.equal((await post('hello')).status, 200);
      const inFlight = await hang(first, token, records, 1);
      const deadline = Date.now() + 10_000;
      while (recordedPids(records).runs.filter(isAlive).length < 3 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const live = recordedPids(records).runs.filter(isAlive);
      assert.ok(live.length >= 3, `parked turn, worker and the hanging turn: ${live.length}`);
      const workspaces = leftoverWorkspaces(stateDir).sort();

      const started = Date.now();
      const second = spawnSync(
        process.execPath,
        [OLP_BIN, 'serve', '--state-dir', stateDir, '--port', '0', '--claude-bin', FAKE_CLAUDE],
        { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: base }, timeout: 20_000 },
      );
      const took = Date.now() - started;
      assert.equal(second.status, 1, second.stderr);
      assert.equal(second.stdout, '');
      const port = new URL(first.url).port;
      assert.equal(
        second.stderr,
        `olp: the state dir ${stateDir} is in use by another olp (pid ${first.child.pid}, port ${port}: ${first.url}); stop that one first, or use another --state-dir\n`,
      );
      assert.ok(took < 5_000, `exited after ${took} ms`);

      assert.deepEqual(
        live.filter((pid) => !isAlive(pid)),
        [],
        'no CLI of the running olp was stopped',
      );
      assert.deepEqual(leftoverWorkspaces(stateDir).sort(), workspaces, 'no workspace of the running olp was removed');
      // And the running olp still answers.
      assert.equal((await post('still there?')).status, 200);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);
      await Promise.all(inFlight);
    } finally {
      first.child.kill('SIGKILL');
    }
  });
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** A shell pipeline in its own process group, killed whole when the test ends however it ends. */
function pipeline(script: string): { child: ChildProcess; exited: Promise<number | null>; kill(): void } {
  const child = spawn('sh', ['-c', script], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '', HOME: base },
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    kill: () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    },
  };
}

describe('a reader that has gone or never reads never holds olp', () => {
  const olpServe = (stateDir: string, port: number, extra = '') =>
    `"${process.execPath}" "${OLP_BIN}" serve --state-dir "${stateDir}" --port ${port} --claude-bin "${FAKE_CLAUDE}" ${extra}`;

  for (const format of ['text', 'json']) {
    it(`olp serve 2>&1 | head -1 with the port taken exits at once (--log-format ${format})`, async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as AddressInfo).port;
      const p = pipeline(
        `${olpServe(join(base, `head-${format}`, 'state'), port, `--log-format ${format}`)} 2>&1 | head -1`,
      );
      try {
        const started = Date.now();
        const code = await Promise.race([
          p.exited,
          new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000)),
        ]);
        assert.notEqual(code, 'hung', 'still running after 10 s');
        assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
      } finally {
        p.kill();
        taken.close();
      }
    });
  }

  it('a daemon whose stdout and stderr pipe is never read still answers SIGTERM, after far more log than a pipe holds', async () => {
    const stateDir = join(base, 'never-read', 'state');
    const port = await freePort();
    // `sleep` never reads its stdin: every line olp writes stays in the pipe, then in olp.
    const p = pipeline(`${olpServe(stateDir, port, '--log-level debug')} 2>&1 | sleep 600`);
    try {
      // The lock's holder file says olp's pid once it listens.
      let pid = 0;
      const deadline = Date.now() + 15_000;
      while (pid === 0 && Date.now() < deadline) {
        try {
          const h = JSON.parse(readFileSync(join(stateDir, 'serve.json'), 'utf8')) as {
            pid: number;
            port: number | null;
          };
          if (h.port === port) pid = h.pid;
        } catch {
          // not written yet
        }
        if (pid === 0) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(pid > 0, 'olp started');
      // ~2,000 requests, each one log line: several times the 64 KiB a pipe holds.
      for (let i = 0; i < 20; i++) {
        await Promise.all(
          Array.from({ length: 100 }, () =>
            fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: 'Bearer nope' } }).then((r) =>
              r.arrayBuffer(),
            ),
          ),
        );
      }
      const started = Date.now();
      process.kill(pid, 'SIGTERM');
      assert.deepEqual(await waitGone([pid], 10_000), [], 'olp still running 10 s after SIGTERM');
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
    } finally {
      p.kill();
    }
  });
});

describe('daemon signals', () => {
  it('SIGTERM with requests in flight: children gone, workspaces removed, exit code 0', async () => {
    const { stateDir, records, token } = setup('term');
    const r = await serve(stateDir, records);
    const requests = await hang(r, token, records, 4);
    assert.equal(leftoverWorkspaces(stateDir).length, 4);
    r.child.kill('SIGTERM');
    assert.equal(await r.exited, 0);
    const statuses = await Promise.all(requests);
    for (const s of statuses) assert.ok(s === 503 || s === 'TypeError', `request ended with ${s}`);
    assert.deepEqual(await waitGone(recordedPids(records).runs), []);
    assert.deepEqual(leftoverWorkspaces(stateDir), []);
    assert.ok(
      r.logs.some((l) => l.event === 'shutdown_kill'),
      'the grace ran out and the CLIs were stopped',
    );
  });

  it('SIGKILL with requests in flight: the next start removes the workspaces and stops the orphaned CLIs', async () => {
    const { stateDir, records, token } = setup('kill');
    const first = await serve(stateDir, records);
    const requests = await hang(first, token, records, 3);
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(requests);
    const orphans = recordedPids(records).runs;
    assert.equal(orphans.filter(isAlive).length, 3, 'a crash leaves the CLIs running');
    assert.equal(leftoverWorkspaces(stateDir).length, 3);

    const second = await serve(stateDir, records);
    try {
      const sweep = await logged(second, 'workspace_sweep');
      // A CLI whose input was the killed olp may end by itself before the sweep gets to it: the
      // sweep stops the rest, and none survives.
      assert.equal(sweep?.removed, 3);
      assert.ok(Number(sweep?.killed) >= 1 && Number(sweep?.killed) <= 3, JSON.stringify(sweep));
      assert.deepEqual(leftoverWorkspaces(stateDir), []);
      assert.deepEqual(await waitGone(orphans), []);
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0, JSON.stringify(second.logs.slice(-6)));
    }
  });

  it('SIGKILL with a live worker and a spare: their stdin ends with olp, so they exit; the next start removes their workspaces', async () => {
    const { stateDir, records, token } = setup('kill-workers');
    const first = await serve(stateDir, records);
    const res = await fetch(`${first.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(res.status, 200);
    const deadline = Date.now() + 10_000;
    while (recordedPids(records).runs.filter(isAlive).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const live = recordedPids(records).runs.filter(isAlive);
    assert.equal(live.length, 2, 'the worker and a spare');
    first.child.kill('SIGKILL');
    await first.exited;
    assert.deepEqual(await waitGone(live), [], 'a live CLI never outlives olp: its stdin was olp');
    assert.equal(leftoverWorkspaces(stateDir).length, 2);
    const second = await serve(stateDir, records);
    try {
      assert.equal((await logged(second, 'workspace_sweep'))?.removed, 2);
      assert.deepEqual(leftoverWorkspaces(stateDir), []);
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    }
  });

  it('SIGKILL with a CLI whose grandchild left its process group: the next start finds it by HOME and kills it', async () => {
    const { stateDir, records, token } = setup('escaped');
    const first = await serve(stateDir, records);
    const requests = await hang(first, token, records, 1, 'setsid-hang');
    // The fake starts its grandchild after it has read its prompt: wait for it (a loaded machine
    // can be slower than the crash below).
    const deadline = Date.now() + 10_000;
    while (recordedPids(records).grandchildren.filter(isAlive).length < 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(requests);
    const { runs, grandchildren } = recordedPids(records);
    assert.equal(grandchildren.filter(isAlive).length, 1, 'the escaped grandchild survived the crash');

    const second = await serve(stateDir, records);
    try {
      const sweep = await logged(second, 'workspace_sweep');
      assert.equal(sweep?.removed, 1);
      assert.deepEqual(await waitGone([...runs, ...grandchildren]), []);
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0, JSON.stringify(second.logs.slice(-6)));
    }
  });
});
