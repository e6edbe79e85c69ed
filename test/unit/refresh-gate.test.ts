// One refresher per login file: while a ChatGPT login's access token is about to expire, its runs
// start one at a time, each once the one before has refreshed the file, exited, or had its hold.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createCodexBackend } from '../../src/backends/codex/index.js';
import type { Turn } from '../../src/backends/index.js';
import { createRefreshGate } from '../../src/logins/index.js';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** A codex ChatGPT auth.json whose access token expires `inS` seconds from now. */
const chatgpt = (inS: number, gen = 1) =>
  JSON.stringify({
    auth_mode: 'chatgpt',
    OPENAI_API_KEY: null,
    tokens: {
      access_token: `${b64({ alg: 'none' })}.${b64({ exp: Math.floor(Date.now() / 1000) + inS, gen })}.sig`,
      refresh_token: `rt-${gen}`,
      account_id: 'acct-1',
    },
  });

function setup(content: string) {
  const dir = mkdtempSync(join(tmpdir(), 'olp-gate-'));
  const file = join(dir, 'auth.json');
  writeFileSync(file, content);
  const backend = createCodexBackend({ bin: 'codex', auth: file, passEnv: [], env: {}, config: [] });
  const turn: Turn = { prompt: { system: null, text: 'hi' }, cliModel: 'codex' };
  // As codex writes it: a new file renamed over the old one.
  const refresh = (text: string) => {
    writeFileSync(`${file}.new`, text);
    renameSync(`${file}.new`, file);
  };
  return { file, backend, turn, refresh };
}

const never = new Promise<void>(() => undefined);

describe('the refresh gate', () => {
  it('a token far from expiry, an API key: every run starts at once', async () => {
    const gate = createRefreshGate();
    for (const content of [chatgpt(3600), '{"auth_mode":"apikey","OPENAI_API_KEY":"sk-x"}']) {
      const { backend, turn } = setup(content);
      assert.equal(await gate.enter(backend, turn), undefined);
      assert.equal(await gate.enter(backend, turn), undefined);
      assert.equal(gate.busy(backend, turn), false);
    }
  });

  it('an expiring token: the second run waits until the first has refreshed the file, then starts without a turn', async () => {
    const gate = createRefreshGate();
    const { backend, turn, refresh } = setup(chatgpt(180));
    const first = await gate.enter(backend, turn);
    assert.ok(first, 'the first run takes the turn to refresh');
    first.started(never);
    assert.equal(gate.busy(backend, turn), true, 'background starts hold off');
    let second: unknown = 'waiting';
    const entering = gate.enter(backend, turn).then((t) => {
      second = t;
    });
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(second, 'waiting', 'no second refresher while the first holds the turn');
    refresh(chatgpt(3600, 2));
    await entering;
    assert.equal(second, undefined, 'the file is fresh: the next run needs no turn');
    assert.equal(gate.busy(backend, turn), false);
  });

  it('a run that exits, or holds its turn too long, hands the turn to the next; a waiting run whose client left gives up', async () => {
    const gate = createRefreshGate({ holdMs: 300 });
    const { backend, turn } = setup(chatgpt(60));
    const first = (await gate.enter(backend, turn))!;
    let exit!: () => void;
    first.started(new Promise<void>((r) => (exit = r)));
    const next = gate.enter(backend, turn);
    exit();
    const second = (await next)!;
    assert.ok(second, 'the first exited without refreshing: the next takes the turn');
    const t0 = Date.now();
    second.started(never);
    const third = (await gate.enter(backend, turn))!;
    assert.ok(Date.now() - t0 >= 250, 'held until its hold ran out');
    third.started(never);
    const left = new AbortController();
    const waiting = gate.enter(backend, turn, left.signal);
    left.abort();
    assert.equal(await waiting, undefined);
    third.release();
  });
});
