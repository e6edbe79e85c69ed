// A coding agent's session through olp, both sides real: Claude Code (the tier's claude) or codex
// (pinned) as the client of a real listening olp whose backend is the same real CLI against a
// loopback stand-in that plays the model (test/support/session-model.ts: per user prompt two tool
// calls, made through olp's MCP bridge with the client's own tools, then text). Three user turns in
// one project dir (`claude -p`, then `claude --continue -p` twice; `codex exec`, then `codex exec
// resume --last` twice). What olp should do for such a session: one live CLI for the conversation
// (a tool step continues the CLI parked at its calls, a later user turn the CLI kept from the
// turn before), a background request (Claude Code's session title) one short run of its own.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  allLogged,
  backendStarts,
  type ClientRecorder,
  type ClientRun,
  describeRows,
  explainRuns,
  runClaudeCode,
  runCodex,
  type SessionPlace,
  type SessionRow,
  sessionPlace,
  sessionRows,
  startClientRecorder,
} from '../support/agent-session.js';
import { claudeStandInEnv } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION, REAL_CODEX } from '../support/paths.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { codexStandInConfig, CODEX_STAND_IN_ENV } from '../support/responses-stand-in.js';
import {
  claudeScript,
  codexScript,
  SESSION_FILES,
  type SessionModel,
  startClaudeSessionModel,
  startCodexSessionModel,
} from '../support/session-model.js';
import { explainDivergences } from '../support/session-diff.js';
import { waitFor } from '../support/wait.js';

/** What one session left to check: the client's runs, the requests as olp served them, olp's log. */
interface Session {
  runs: ClientRun[];
  rows: SessionRow[];
  /** For main requests that did not run on a live CLI: what differed from the conversation olp kept. */
  why: Map<number, string>;
  starts: Record<string, unknown>[];
  place: SessionPlace;
}

/** Why each main request that did not run on a live CLI ran otherwise (see explainRuns). */
function divergences(rec: ClientRecorder, rows: readonly SessionRow[]): Map<number, string> {
  const main = rows.filter((r) => r.kind === 'main');
  try {
    return explainRuns(rows, explainDivergences(rec.seen, new Set(main.map((r) => r.n))));
  } catch (err) {
    return new Map(main.map((r) => [r.n, `could not read the requests as olp does: ${String(err)}`]));
  }
}

/** Runs the session's turns, then waits until olp has logged every request it served. */
async function session(
  t: TestDaemon,
  rec: ClientRecorder,
  model: SessionModel<unknown>,
  place: SessionPlace,
  drive: () => Promise<ClientRun[]>,
): Promise<Session> {
  const runs = await drive();
  await waitFor(() => allLogged(rec.seen, t.logs), 30_000, 'olp to log every request of the session');
  const rows = sessionRows(rec.seen, t.logs, model.calls);
  // What differed is news only for a request olp did not go on with on a live CLI.
  const continued = new Set(rows.filter((r) => r.run === 'warm' || r.run === 'parked').map((r) => r.n));
  const why = new Map([...divergences(rec, rows)].filter(([n]) => !continued.has(n)));
  return { runs, rows, why, starts: backendStarts(t.logs), place };
}

/**
 * The assertions of a session, one test each, so that every one that fails is reported; a failure
 * names the requests at fault, with what in each differed from the conversation olp kept.
 */
function assertSession(get: () => Session, client: string): void {
  const rows = () => get().rows;
  const main = () => rows().filter((r) => r.kind === 'main');
  const lines = (rs: readonly SessionRow[]) => describeRows(rs, get().why);

  it(`each turn of ${client} exits 0`, (ctx) => {
    ctx.diagnostic(`requests as olp served them:\n${lines(rows())}`);
    for (const [i, r] of get().runs.entries())
      assert.equal(r.status, 0, `turn ${i + 1}: ${r.stderr.slice(-2000) || r.stdout.slice(-2000)}`);
  });

  it('the files on disk are as the model wrote them', () => {
    for (const [file, want] of Object.entries(SESSION_FILES)) {
      const path = join(get().place.work, file);
      assert.equal(existsSync(path) ? readFileSync(path, 'utf8') : '(missing)', want, file);
    }
  });

  it('at most 2 backend CLI starts for the whole session (background requests aside)', () => {
    const of = new Map(rows().map((r) => [r.requestId, r]));
    const starts = get()
      .starts.filter((l) => of.get(String(l.requestId))?.kind !== 'background')
      .map((l) => `${String(l.event)} pid ${String(l.pid)} (request #${of.get(String(l.requestId))?.n ?? '?'})`);
    assert.ok(starts.length <= 2, `${starts.length} starts: ${starts.join(', ')}\n${lines(rows())}`);
  });

  it('every tool-step request runs parked or warm', () => {
    const steps = main().filter((r) => r.step === 'tool');
    assert.equal(steps.length, 6, `two tool steps a turn\n${lines(rows())}`);
    const off = steps.filter((r) => r.run !== 'parked' && r.run !== 'warm');
    assert.equal(off.length, 0, `${off.length} of 6 tool steps ran otherwise:\n${lines(off)}`);
  });

  it('every user turn after the first runs warm', () => {
    const prompts = main().filter((r) => r.step === 'prompt');
    assert.equal(prompts.length, 3, `one prompt request a turn\n${lines(rows())}`);
    const off = prompts.slice(1).filter((r) => r.run !== 'warm');
    assert.equal(off.length, 0, `${off.length} of 2 later user turns ran otherwise:\n${lines(off)}`);
  });

  it("background requests cost at most one one-shot run each and never touch the session's CLI", () => {
    const mainPids = new Set(main().flatMap((r) => r.pids));
    for (const r of rows().filter((x) => x.kind === 'background')) {
      const line = lines([r]);
      assert.ok(r.starts <= 1, `${r.starts} starts: ${line}`);
      assert.ok(r.run !== 'warm' && r.run !== 'parked', `ran on a live CLI: ${line}`);
      assert.ok(!r.kept, `its CLI was kept as a live worker, not a one-shot run: ${line}`);
      assert.deepEqual(
        r.pids.filter((p) => mainPids.has(p)),
        [],
        `touched the session's CLI: ${line}`,
      );
    }
  });
}

describe(`Claude Code ${REAL_CLAUDE_VERSION} through olp on the real claude: a 3-turn agent session`, () => {
  let model: SessionModel<unknown>;
  let t: TestDaemon;
  let rec: ClientRecorder;
  let dir: string;
  let s: Session;
  const tmpBefore = claudeTmp();

  before(async () => {
    assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
    const claude = await startClaudeSessionModel();
    model = claude as SessionModel<unknown>;
    t = await startTestDaemon({
      config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true, prestart: false },
      claudeEnv: claudeStandInEnv(claude.url),
    });
    rec = await startClientRecorder(t.url);
    dir = mkdtempSync(join(tmpdir(), 'olp-agent-session-'));
    const place = sessionPlace(dir);
    claude.script = claudeScript(place.work);
    const prompts = claude.script.map((x) => x.prompt);
    s = await session(t, rec, model, place, () => runClaudeCode(REAL_CLAUDE, rec, t.token, place, prompts));
  });
  after(async () => {
    const logs = t?.logs ?? [];
    await rec?.close();
    await t?.close();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    assertUnderstood(logs);
    assertNoClaudeTmp(tmpBefore);
  });

  assertSession(() => s, 'Claude Code');
});

// codex has one pinned release: its session runs once, not again under test/real/current/.
if (process.env.OLP_TEST_CLAUDE !== 'current')
  describe('codex through olp on the real codex: a 3-turn agent session', () => {
    let model: SessionModel<unknown>;
    let t: TestDaemon;
    let rec: ClientRecorder;
    let dir: string;
    let s: Session;

    before(async () => {
      assert.ok(existsSync(REAL_CODEX), `the real codex CLI is missing at ${REAL_CODEX}: run npm ci`);
      const codex = await startCodexSessionModel();
      model = codex as SessionModel<unknown>;
      t = await startTestDaemon({
        config: {
          codexBin: REAL_CODEX,
          codexConfig: codexStandInConfig(codex.url),
          timeout: 60,
          idleTimeout: 30,
          workers: true,
          prestart: false,
        },
        codexEnv: CODEX_STAND_IN_ENV,
      });
      rec = await startClientRecorder(t.url);
      dir = mkdtempSync(join(tmpdir(), 'olp-agent-session-'));
      const place = sessionPlace(dir);
      codex.script = codexScript();
      const prompts = codex.script.map((x) => x.prompt);
      s = await session(t, rec, model, place, () => runCodex(REAL_CODEX, rec, t.token, place, prompts));
    });
    after(async () => {
      const logs = t?.logs ?? [];
      await rec?.close();
      await t?.close();
      await model?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      assertUnderstood(logs);
    });

    assertSession(() => s, 'codex');
  });
