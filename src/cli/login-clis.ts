import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackends, type Backend, type LoginUse, type Turn } from '../backends/index.js';
import type { Config } from '../config/index.js';
import { ensurePrivateDir, type CredentialKind } from '../store/index.js';
import { runCommand, runInteractive } from '../process/index.js';
import { toChildEnv } from '../workspace/index.js';
import { toStatusTimeoutText } from './readiness.js';

// The CLIs' own login commands, as `olp logins` runs them for one member: `claude setup-token`,
// `codex login …`, and their status commands to check what was stored. Each runs in a throwaway
// home with the environment a run of that login gets (the allowlist, the operator's opted-in
// variables, never the host's provider keys or nested-session markers), so nothing of the
// operator's own login or home is seen or touched.

type Env = Readonly<Record<string, string | undefined>>;

/** How long a person may take over a login in the browser (codex's device code lasts 15 minutes). */
const INTERACTIVE_MS = 30 * 60_000;
/** `codex login --with-access-token` asks the server who the token belongs to. */
const PIPED_MS = 60_000;

/**
 * What the CLI said of a credential, in a few words fit to print: accepted (`ok` true), refused
 * (false), or not known because its status command did not answer in time (null: not a verdict).
 */
export interface CliVerdict {
  ok: boolean | null;
  said: string;
}

/** A failure of a CLI's own login command, with its words (secrets masked). */
export class LoginFailed extends Error {}

const PROBE_TURN: Omit<Turn, 'login'> = { prompt: { system: null, text: '' }, cliModel: '' };

// Anything that looks like a credential, masked in what olp repeats of a CLI's words.
const SECRETISH = /\b(sk-[A-Za-z0-9_*-]{6,}|at-[A-Za-z0-9_-]{6,}|eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,2})/g;

/** A CLI's output as one short line for olp to repeat: credentials masked, whitespace collapsed. */
export function toSaid(text: string, secrets: readonly string[] = []): string {
  let t = text;
  for (const s of secrets) if (s) t = t.split(s).join('***');
  t = t.replace(SECRETISH, '***').replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

/** Runs `claude` and `codex` for `olp logins`: the configured binaries, each in a home of its own. */
export function createLoginClis(config: Config, hostEnv: Env) {
  const { backends } = createBackends(config, hostEnv);
  const statusMs = config.statusTimeout * 1000;
  const claude = backends.find((b) => b.id === 'claude')!;
  const codex = backends.find((b) => b.id === 'codex')!;

  /** A throwaway home (0700) for one command, removed once `work` is done. */
  async function inHome<T>(work: (home: string) => Promise<T>): Promise<T> {
    const home = mkdtempSync(join(tmpdir(), 'olp-login-'));
    try {
      mkdirSync(join(home, 'tmp'), { mode: 0o700 });
      return await work(home);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }

  /** The environment a run of this login gets from the backend, in `home`. */
  function envFor(b: Backend, home: string, login: LoginUse, extra: Record<string, string> = {}) {
    const place = { home, persistent: home, cwd: home, path: (n: string) => join(home, n) };
    return { ...toChildEnv(hostEnv, b.envPolicy({ ...PROBE_TURN, login }, place), home), ...extra };
  }

  /** A status command that did not answer in time: no verdict on the credential. */
  function notChecked(b: Backend, args: readonly string[], r: { failed: string | null }): CliVerdict | undefined {
    return r.failed === 'timeout'
      ? { ok: null, said: toStatusTimeoutText(b.id, [b.id, ...args].join(' '), statusMs / 1000) }
      : undefined;
  }

  function cannotRun(b: Backend, r: { failed: string | null; exitCode: number | null }): string | undefined {
    if (r.failed === 'spawn')
      return `could not run ${b.id} ('${b.bin}'): is it installed? (set its path with --${b.id}-bin)`;
    if (r.failed === 'timeout') return `${b.id} did not finish in time`;
    return undefined;
  }

  /** `codex login status` in a login's CODEX_HOME. */
  async function codexStatus(name: string, codexHome: string): Promise<CliVerdict> {
    const r = await inHome((home) =>
      runCommand(codex.bin, ['login', 'status'], {
        env: envFor(codex, home, { name }, { CODEX_HOME: codexHome }),
        cwd: home,
        timeoutMs: statusMs,
      }),
    );
    const late = notChecked(codex, ['login', 'status'], r);
    if (late) return late;
    const why = cannotRun(codex, r);
    if (why) return { ok: false, said: why };
    const text = `${r.stdout}\n${r.stderr}`;
    // codex-cli 0.171: "Logged in using ChatGPT" / "… personal access token", "API key configured - sk-***…".
    const how =
      /Logged in using ([^\n]+)/.exec(text)?.[1]?.trim() ??
      (/API key configured/.test(text) ? 'an API key' : undefined);
    if (r.exitCode === 0) return { ok: true, said: `logged in${how ? ` (${toSaid(how)})` : ''}` };
    const lines = text.split('\n').filter((l) => l.trim() && !/^WARNING: /.test(l));
    return { ok: false, said: `not logged in: ${toSaid(lines.join(' ')) || `exit ${r.exitCode}`}` };
  }

  return {
    claudeBin: claude.bin,
    codexStatus,
    codexBin: codex.bin,

    /** `claude setup-token` at the terminal; the person then pastes the token it printed. */
    async setupToken(name: string): Promise<void> {
      const r = await inHome((home) =>
        runInteractive(claude.bin, ['setup-token'], {
          env: envFor(claude, home, { name }),
          cwd: home,
          timeoutMs: INTERACTIVE_MS,
        }),
      );
      const why = cannotRun(claude, r);
      if (why) throw new LoginFailed(why);
      if (r.exitCode !== 0)
        throw new LoginFailed(
          `claude setup-token did not finish (${r.signal ?? `exit ${r.exitCode}`}); nothing was stored`,
        );
    },

    /** `claude auth status` with the token as a run of the login gets it. */
    async claudeStatus(name: string, token: string): Promise<CliVerdict> {
      const r = await inHome((home) =>
        runCommand(claude.bin, ['auth', 'status'], {
          env: envFor(claude, home, { name, token }),
          cwd: home,
          timeoutMs: statusMs,
        }),
      );
      const late = notChecked(claude, ['auth', 'status'], r);
      if (late) return late;
      const why = cannotRun(claude, r);
      if (why) return { ok: false, said: why };
      const ok = claude.status.loggedIn(r.exitCode, r.stdout, r.stderr);
      const method = /"authMethod":\s*"([^"]*)"/.exec(r.stdout)?.[1];
      if (!ok) return { ok, said: `not logged in (exit ${r.exitCode}${method ? `, authMethod ${method}` : ''})` };
      // claude 2.1.197 and 2.1.332 answer `auth status` for a token in the environment without
      // asking the server: a revoked or expired token shows only when a request runs.
      const unchecked = method === 'oauth_token' ? '; the server sees it only when a request runs' : '';
      return { ok, said: `logged in${method ? ` (${method})` : ''}${unchecked}` };
    },

    /**
     * Logs codex in for a login, into `codexHome` (made 0700): by device code at the terminal, or
     * with the secret on stdin. The old CODEX_HOME is replaced only once codex has written an
     * auth.json and `codex login status` accepts it; otherwise nothing changes and LoginFailed says why.
     */
    async codexLogin(name: string, codexHome: string, kind: CredentialKind, secret?: string): Promise<void> {
      const staging = `${codexHome}.new`;
      rmSync(staging, { recursive: true, force: true });
      ensurePrivateDir(staging);
      try {
        await inHome(async (home) => {
          const env = envFor(codex, home, { name }, { CODEX_HOME: staging });
          if (kind === 'chatgpt') {
            const r = await runInteractive(codex.bin, ['login', '--device-auth'], {
              env,
              cwd: home,
              timeoutMs: INTERACTIVE_MS,
              stdin: 'ignore',
            });
            const why = cannotRun(codex, r);
            if (why) throw new LoginFailed(why);
            if (r.exitCode !== 0)
              throw new LoginFailed(
                `codex login --device-auth failed (${r.signal ?? `exit ${r.exitCode}`}; codex's message is above)`,
              );
          } else {
            const flag = kind === 'api-key' ? '--with-api-key' : '--with-access-token';
            const r = await runCommand(codex.bin, ['login', flag], {
              env,
              cwd: home,
              timeoutMs: PIPED_MS,
              input: `${secret ?? ''}\n`,
            });
            const why = cannotRun(codex, r);
            if (why) throw new LoginFailed(why);
            if (r.exitCode !== 0) {
              const said = r.stderr
                .split('\n')
                .filter((l) => l.trim() && !/^WARNING: |^Reading .* from stdin/.test(l))
                .join(' ');
              throw new LoginFailed(
                `codex login ${flag} failed: ${toSaid(said, [secret ?? '']) || `exit ${r.exitCode}`}`,
              );
            }
          }
        });
        const auth = join(staging, 'auth.json');
        if (!existsSync(auth)) throw new LoginFailed('codex login finished but wrote no auth.json; nothing was stored');
        chmodSync(auth, 0o600);
        const verdict = await codexStatus(name, staging);
        if (verdict.ok === null) throw new LoginFailed(`${verdict.said}, so nothing was stored; try again`);
        if (!verdict.ok) throw new LoginFailed(`codex does not accept the new login: ${verdict.said}`);
        // Renamed over the old one: a run that starts meanwhile links either the old auth.json or
        // the new one, never none. (What else codex left in the staging home is not needed.)
        ensurePrivateDir(codexHome);
        renameSync(auth, join(codexHome, 'auth.json'));
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    },
  };
}

export type LoginClis = ReturnType<typeof createLoginClis>;
