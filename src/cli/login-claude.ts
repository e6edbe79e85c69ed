// claude's own login commands for `olp logins`: `claude setup-token` at the terminal, and `claude auth
// status` with a stored token.
import { runInteractive } from '../process/index.js';
import { cannotRun, envFor, INTERACTIVE_MS, inHome, type LoginCliContext, runStatusInHome } from './login-run.js';
import { type CliVerdict, LoginFailed } from './login-said.js';

/** `claude setup-token` at the terminal; the person then pastes the token it printed. */
export async function setupToken(c: LoginCliContext, name: string): Promise<void> {
  const { claude } = c;
  const r = await inHome((home) =>
    runInteractive(claude.bin, ['setup-token'], {
      env: envFor(c, claude, home, { name }),
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
}

/** `claude auth status` with the token as a run of the login gets it. */
export async function claudeStatus(c: LoginCliContext, name: string, token: string): Promise<CliVerdict> {
  const { claude } = c;
  const run = await runStatusInHome(c, claude, ['auth', 'status'], { name, token });
  if ('verdict' in run) return run.verdict;
  const r = run.result;
  const ok = claude.status.loggedIn(r.exitCode, r.stdout, r.stderr);
  const method = /"authMethod":\s*"([^"]*)"/.exec(r.stdout)?.[1];
  if (!ok) return { ok, said: `not logged in (exit ${r.exitCode}${method ? `, authMethod ${method}` : ''})` };
  // claude 2.1.197 and 2.1.332 answer `auth status` for a token in the environment without
  // asking the server: a revoked or expired token shows only when a request runs.
  const unchecked = method === 'oauth_token' ? '; the server sees it only when a request runs' : '';
  return { ok, said: `logged in${method ? ` (${method})` : ''}${unchecked}` };
}
