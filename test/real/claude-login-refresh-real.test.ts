// The real `claude` binary (pinned devDependency) refreshing the machine's login: concurrent runs
// through olp share the owner's login file and its refresh locks (CLAUDE_SECURESTORAGE_CONFIG_DIR),
// so an expired login is refreshed once and the owner's file keeps the rotated token. claude's
// token endpoint is played by an HTTPS proxy with a throwaway CA (test/support/oauth-stand-in.ts);
// the Messages API by the loopback stand-in. The control runs the same claude in the layout olp
// used before (each home with the login file linked alone) and shows the race the test guards.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import OpenAI from 'openai';
import { runDirFor } from '../../src/workspace/index.js';
import { startAnthropicStandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon } from '../support/daemon.js';
import { oauthStandInUnavailable, startOAuthStandIn, type OAuthStandIn } from '../support/oauth-stand-in.js';
import { listTree, REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';

/** Concurrent runs, each a conversation of its own. */
const N = 4;
const CREDENTIALS = '.credentials.json';
/** How long the token endpoint takes to answer a refresh: runs that refresh together overlap. */
const REFRESH_MS = 600;

const skip = !existsSync(REAL_CLAUDE)
  ? `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`
  : oauthStandInUnavailable();

/** A machine owner's claude.ai login whose access token has expired an hour ago; its refresh token is the stand-in's first. */
function writeOwnerLogin(home: string): string {
  mkdirSync(join(home, '.claude'), { recursive: true });
  const file = join(home, '.claude', CREDENTIALS);
  const login = {
    claudeAiOauth: {
      accessToken: 'at-expired',
      refreshToken: 'rt-0',
      expiresAt: Date.now() - 3_600_000,
      scopes: ['user:inference', 'user:profile', 'user:sessions:claude_code'],
      subscriptionType: 'max',
      rateLimitTier: 'default_claude_max_5x',
    },
  };
  writeFileSync(file, JSON.stringify(login), { mode: 0o600 });
  return file;
}

function readLogin(file: string): { accessToken: string; refreshToken: string } {
  return (JSON.parse(readFileSync(file, 'utf8')) as { claudeAiOauth: { accessToken: string; refreshToken: string } })
    .claudeAiOauth;
}

/** Every `.credentials.json` under `dir` that is a regular file (a run's private copy of a login). */
function regularLoginFiles(dir: string): string[] {
  return listTree(dir)
    .filter((f) => f.endsWith(CREDENTIALS))
    .map((f) => join(dir, f))
    .filter((f) => lstatSync(f, { throwIfNoEntry: false })?.isFile());
}

/** The claude homes (folders holding a `.claude`) under `dir`. */
function runHomes(dir: string): string[] {
  return listTree(dir)
    .filter((f) => f === '.claude' || f.endsWith('/.claude'))
    .map((f) => join(dir, f, '..'));
}

/** What the token stand-in saw, for the test's output. */
function tally(oauth: OAuthStandIn): string {
  const refused = oauth.refreshes.filter((r) => r.result === 'invalid_grant').length;
  return `${oauth.refreshes.length} refresh call(s), ${refused} refused as a spent token`;
}

const tmpBefore = claudeTmp();
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  assertNoClaudeTmp(tmpBefore);
});

describe(`real claude ${REAL_CLAUDE_VERSION}: concurrent runs refresh the machine's login once`, { skip }, () => {
  it(`olp: ${N} concurrent conversations on an expired login make 1 refresh; all answer; the owner's file holds the rotated token`, async (t) => {
    const oauth = await startOAuthStandIn({ delayMs: REFRESH_MS });
    cleanups.push(() => oauth.close());
    const api = await startAnthropicStandIn();
    cleanups.push(() => api.close());
    const owner = mkdtempSync(join(tmpdir(), 'olp-owner-'));
    cleanups.push(() => rmSync(owner, { recursive: true, force: true }));
    const ownerFile = writeOwnerLogin(owner);
    const d = await startTestDaemon({
      config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true, claudeCredentials: ownerFile },
      // The operator's opt-in environment: the stand-ins' addresses and the proxy's CA. No API key:
      // the login file is the credential.
      claudeEnv: { ANTHROPIC_BASE_URL: api.url, CLAUDE_CODE_MAX_RETRIES: '0', ...oauth.env },
      hostEnv: { HOME: owner },
    });
    cleanups.push(async () => {
      await d.close();
      assertUnderstood(d.logs);
    });
    const client = new OpenAI({ baseURL: d.baseURL, apiKey: d.token, maxRetries: 0 });

    // Each answer as status and text, so a refused run still lets the counts below be reported.
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        client.chat.completions
          .create({ model: 'sonnet', messages: [{ role: 'user', content: `conversation ${i} says hello` }] })
          .withResponse()
          .then(
            ({ data, response }) => [response.status, data.choices[0]?.message.content],
            (err: unknown) => [(err as { status?: number }).status, String(err)],
          ),
      ),
    );
    t.diagnostic(`olp's layout, claude ${REAL_CLAUDE_VERSION}: ${tally(oauth)}`);
    const answered = oauth.refreshes[0] ? oauth.refreshes[0].at + REFRESH_MS : Number.NaN;
    const started = d.logs.filter((l) => l.event === 'spawned' && Date.parse(String(l.time)) < answered).length;
    t.diagnostic(`${started} of ${N} runs had started before the refresh was answered`);

    assert.deepEqual(
      oauth.refreshes.map((r) => [r.refreshToken, r.result]),
      [['rt-0', 'ok']],
      'one refresh, with the owner’s refresh token',
    );
    assert.deepEqual(
      answers,
      answers.map((_, i) => [200, `stand-in heard: conversation ${i} says hello`]),
      'every conversation answered',
    );
    // The runs took the refreshed token from the owner's file: none refreshed on its own, none
    // used the expired one.
    const used = [...new Set(api.requests.map((r) => r.credential))];
    assert.deepEqual(used, ['at-1'], 'every call to the Messages API carried the refreshed token');
    assert.ok(lstatSync(ownerFile).isFile(), "the owner's login is still a regular file at its path");
    const login = readLogin(ownerFile);
    assert.deepEqual(
      [login.accessToken, login.refreshToken],
      ['at-1', 'rt-1'],
      "the owner's file holds the rotated token",
    );
    // No run keeps a login of its own: the live workers' homes are still there to look at.
    const homes = [...new Set([runDirFor(d.stateDir), d.stateDir].flatMap((dir) => runHomes(dir)))];
    assert.ok(homes.length >= N, `the runs' homes are there to look at: ${homes.join(', ')}`);
    assert.deepEqual(
      homes.flatMap((h) => regularLoginFiles(h)),
      [],
      'no run home holds a copy of the login',
    );
  });

  it(`control: the same ${N} runs with the login file linked alone into each home (olp's earlier layout) refresh more than once`, async (t) => {
    const oauth = await startOAuthStandIn({ delayMs: REFRESH_MS });
    cleanups.push(() => oauth.close());
    const api = await startAnthropicStandIn();
    cleanups.push(() => api.close());
    const root = mkdtempSync(join(tmpdir(), 'olp-linked-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const ownerFile = writeOwnerLogin(join(root, 'owner'));

    const runs = await Promise.all(
      Array.from({ length: N }, (_, i) => {
        const home = join(root, `run${i}`, 'home');
        mkdirSync(join(home, '.claude'), { recursive: true });
        mkdirSync(join(home, 'tmp'));
        mkdirSync(join(root, `run${i}`, 'work'));
        symlinkSync(ownerFile, join(home, '.claude', CREDENTIALS));
        return runClaude(join(root, `run${i}`, 'work'), {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          TMPDIR: join(home, 'tmp'),
          ANTHROPIC_BASE_URL: api.url,
          CLAUDE_CODE_MAX_RETRIES: '0',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          ...oauth.env,
        });
      }),
    );
    const copies = regularLoginFiles(root).filter((f) => f !== ownerFile).length;
    t.diagnostic(
      `linked layout, claude ${REAL_CLAUDE_VERSION}: ${tally(oauth)}; exits ${runs.map((r) => r.code).join(',')}; ` +
        `${copies} of ${N} links replaced by a file of the run's own; owner's refresh token now ${readLogin(ownerFile).refreshToken}`,
    );
    assert.ok(oauth.refreshes.length > 1, `the runs raced on one refresh token: ${tally(oauth)}`);
  });
});

/** Runs `claude -p` as olp's earlier layout did, with this environment only; resolves at its exit. */
function runClaude(cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(REAL_CLAUDE, ['-p', 'say hi', '--output-format', 'json'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout });
    });
  });
}
