import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Link } from '../../workspace/index.js';
import { INSTALL_COMMAND, LOGIN_COMMAND } from './fixes.js';
import { toEnvPolicy, withoutApiKeys } from '../common.js';
import type { Backend, EnvPolicy, ModelEntry, Place, Turn, Usage } from '../types.js';
import { toCodexSpawnError } from './errors.js';
import { appServerReady, createTurnIds, toAppServerInvocation, toTurnStart } from './live-invocation.js';
import { createAppServerParser } from './live.js';
import { createCodexParser } from './events.js';
import { codexHome, TOOLS_TOKEN_VAR, toCodexInvocation } from './invocation.js';
import { withoutAddedNulls } from './schema.js';
import { subtractUsage, toCodexUsage } from './usage.js';

export { createCodexParser } from './events.js';
export { toCodexError, CODEX_LOGIN_FIX } from './errors.js';
export { toCodexUsage, toRawCodexUsage, subtractUsage } from './usage.js';

// Models codex-cli 0.171 knows; `codex` leaves the choice to the CLI (its configured default).
const CREATED = 1764547200;
const MODELS: ModelEntry[] = [
  'codex',
  'gpt-6.2-sol',
  'gpt-6.2-astra',
  'gpt-6.1-sol',
  'gpt-6.1-terra',
  'gpt-6-sol',
  'gpt-6-astra',
  'gpt-6-luna',
  'gpt-5.6-sol',
  'gpt-5.5',
].map((id) => ({
  id,
  cliModel: id,
  created: CREATED,
  // OpenAI documents 128,000 output tokens for the GPT-5 family's models. codex 0.171 takes no
  // output cap (see invocation.ts), so this only bounds what a request may ask; `codex` (the
  // CLI's own choice) has none and takes the global bound.
  ...(id === 'codex' ? {} : { maxOutputTokens: 128_000 }),
}));
const PASS_THROUGH = /^(gpt-[a-z0-9][a-z0-9.-]{0,60}|o\d[a-z0-9.-]{0,40})$/;

const API_KEY_VARS = ['CODEX_API_KEY', 'OPENAI_API_KEY', 'CODEX_ACCESS_TOKEN'];

/** The operator's codex login file: $CODEX_HOME/auth.json, else ~/.codex/auth.json. */
export function defaultCodexAuth(hostEnv: Readonly<Record<string, string | undefined>>): string {
  return join(hostEnv.CODEX_HOME || join(hostEnv.HOME || homedir(), '.codex'), 'auth.json');
}

export interface CodexOptions {
  bin: string;
  /** The operator's codex login (`~/.codex/auth.json`), linked into each run's CODEX_HOME. */
  auth: string;
  passEnv: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Extra `-c key=value` overrides (e.g. a model provider for a local stand-in). */
  config: readonly string[];
}

/**
 * The codex backend: `codex exec --json` per turn, `exec resume <thread>` for sessions, and an
 * `app-server` worker for a session's continued turns (see live.ts).
 */
export function createCodexBackend(opts: CodexOptions): Backend {
  const nextTurnId = createTurnIds();
  return {
    id: 'codex',
    bin: opts.bin,
    owner: 'codex',
    status: {
      versionArgs: ['--version'],
      loginArgs: ['login', 'status'],
      loggedIn: (code) => code === 0,
      // `codex login status` with an API key in auth.json (codex-cli 0.171, on stderr): "API key
      // configured - sk-proj-***…"; older releases said "Logged in using an API key - sk-…".
      keyLogin: (stdout, stderr) => /API key configured|Logged in using an API key/i.test(stdout + stderr),
      loginCommand: LOGIN_COMMAND,
      installCommand: INSTALL_COMMAND,
    },
    // codex takes images as files (--image) and has no tool-id rules of its own; it has no document input.
    transcriptPolicy: (limits) => ({ toolIdPattern: null, images: true, documents: false, name: 'codex', limits }),
    models: MODELS,
    acceptsModel: (id) => PASS_THROUGH.test(id),
    homeDirs: ['.codex'],
    credentials: [opts.auth],
    apiKeyVars: API_KEY_VARS,
    links(turn: Turn) {
      const links: Link[] = [{ from: turn.login?.file ?? opts.auth, to: '.codex/auth.json' }];
      // Rollouts (the thread transcripts `exec resume` reads) must outlive the run's home.
      if (turn.session && turn.session.mode !== 'ephemeral')
        links.push({ from: 'codex-sessions', to: '.codex/sessions', persistent: true });
      return links;
    },
    // A ChatGPT login rotates its refresh token when codex refreshes it (within 5 minutes of the
    // access token's expiry, codex 0.171): olp lets one run at a time do that (src/logins/refresh.ts).
    refreshable: (turn) => ({ file: turn.login?.file ?? opts.auth, expiresAt: chatgptExpiry }),
    envPolicy(turn: Turn, place: Place): EnvPolicy {
      // CODEX_HOME is always the run's own; the host's (and its database home) never leak in.
      const tools: Record<string, string> = turn.tools ? { [TOOLS_TOKEN_VAR]: turn.tools.token } : {};
      const own = turn.login ? withoutApiKeys(opts.env, API_KEY_VARS) : opts.env;
      return toEnvPolicy(
        { ...own, CODEX_HOME: codexHome(place), NO_COLOR: '1', ...tools },
        turn.login ? withoutApiKeys(opts.passEnv, API_KEY_VARS) : opts.passEnv,
        API_KEY_VARS,
        (name) => name === 'CODEX_SQLITE_HOME',
      );
    },
    prepare: (turn, place) => toCodexInvocation(opts.bin, turn, place, opts.config),
    createParser: () => createCodexParser(),
    spawnError: (exit) => toCodexSpawnError(opts.bin, exit),
    // Optional properties came back required-but-null (the strict form): left out again.
    fitReply(text, schema) {
      try {
        return JSON.stringify(withoutAddedNulls(JSON.parse(text), schema));
      } catch {
        return text;
      }
    },
    cumulativeUsage: true,
    // `exec fork` writes a rollout that points at the old one (0.171: resuming it without the old
    // one fails with "invalid paginated history lineage … missing source rollout").
    forks: { keepsSource: true },
    rebaseUsage(usage: Usage, base: Readonly<Record<string, number>>): Usage {
      return toCodexUsage(subtractUsage(usage.raw, base)) ?? usage;
    },
    // After a cold `codex exec` turn, an app-server loads its thread for the conversation's next turns.
    live: {
      coldIsLive: false,
      input: (prompt, threadId, outputSchema) => toTurnStart(nextTurnId, prompt, threadId, outputSchema),
      parser: () => createAppServerParser(),
      ready: appServerReady,
      resume: (turn, place) => toAppServerInvocation(opts.bin, turn, place, opts.config),
    },
  };
}

/**
 * When a codex auth.json's ChatGPT access token expires (its JWT `exp`), epoch ms; null for an API
 * key or token login.
 */
function chatgptExpiry(text: string): number | null {
  try {
    const auth = JSON.parse(text) as { tokens?: { access_token?: unknown; refresh_token?: unknown } | null };
    const token = auth.tokens?.access_token;
    if (typeof token !== 'string' || !auth.tokens?.refresh_token) return null;
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}
