// claude's own login commands for `olp logins` and the usage page: `claude setup-token` at the
// terminal, `claude auth status` with a stored token or API key, and one tiny request to see that
// the provider takes it.
import { runCommand, runInteractive } from '../process/index.js';
import { cannotRun, envFor, INTERACTIVE_MS, inHome, type LoginCliContext, runStatusInHome } from './cli-run.js';
import { type CliVerdict, LoginFailed, toSaid } from './said.js';

/** A claude credential as a run of the login gets it: a setup token, or an Anthropic API key. */
export type ClaudeSecret = { token: string } | { apiKey: string };

/** How long the tiny request may take: one short answer, tools off. */
const CHECK_MS = 60_000;

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

/** `claude auth status` with the token (or API key) as a run of the login gets it. */
export async function claudeStatus(c: LoginCliContext, name: string, secret: ClaudeSecret): Promise<CliVerdict> {
  const { claude } = c;
  const run = await runStatusInHome(c, claude, ['auth', 'status'], { name, ...secret });
  if ('verdict' in run) return run.verdict;
  const r = run.result;
  const ok = claude.status.loggedIn(r.exitCode, r.stdout, r.stderr);
  const method = /"authMethod":\s*"([^"]*)"/.exec(r.stdout)?.[1];
  if (!ok) return { ok, said: `not logged in (exit ${r.exitCode}${method ? `, authMethod ${method}` : ''})` };
  // claude 2.1.197 and 2.1.332 answer `auth status` for a token in the environment without
  // asking the server: a revoked or expired token shows only when a request runs.
  const unchecked =
    method === 'oauth_token' || method === 'api_key' ? '; the server sees it only when a request runs' : '';
  return { ok, said: `logged in${method ? ` (${method})` : ''}${unchecked}` };
}

/**
 * One tiny request (`claude -p`, one turn, no tools, a one-word answer) in a throwaway home with
 * the credential as a run of the login gets it: whether the provider takes it (`ok` null: no
 * answer in time, or claude could not run).
 */
export async function claudeCheck(c: LoginCliContext, name: string, secret: ClaudeSecret): Promise<CliVerdict> {
  const { claude } = c;
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--max-turns', '1', '--tools', ''];
  const r = await inHome((home) =>
    runCommand(claude.bin, args, {
      env: envFor(c, claude, home, { name, ...secret }),
      cwd: home,
      timeoutMs: CHECK_MS,
      input: 'Reply with the one word: ok\n',
    }),
  );
  const why = cannotRun(claude, r);
  if (why) return { ok: null, said: why };
  const secrets = ['token' in secret ? secret.token : secret.apiKey];
  const result = lastResult(r.stdout);
  if (r.exitCode === 0 && result && !result.isError) return { ok: true, said: 'a request was answered' };
  const words = result?.text || r.stderr.trim() || `exit ${r.exitCode}`;
  return { ok: false, said: toSaid(words, secrets) };
}

/** The `result` line of claude's stream-json output, if it printed one. */
function lastResult(stdout: string): { isError: boolean; text: string } | undefined {
  for (const line of stdout.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const v = JSON.parse(line) as { type?: unknown; is_error?: unknown; result?: unknown };
      if (v.type === 'result')
        return { isError: v.is_error === true, text: typeof v.result === 'string' ? v.result : '' };
    } catch {
      // not JSON: claude's words on stdout, read from stderr instead
    }
  }
  return undefined;
}
