import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Link } from '../../workspace/index.js';
import { INSTALL_COMMAND, LOGIN_COMMAND } from './fixes.js';
import { toEnvPolicy, withoutApiKeys } from '../common.js';
import type { Backend, EnvPolicy, ModelEntry, Place, Turn } from '../types.js';
import { createClaudeParser } from './events.js';
import { toSpawnError } from './errors.js';
import { createControlIds, isControlResponse, toClaudeInvocation, toInit, toUserLine } from './invocation.js';
import { toThinkingTokens } from './reasoning.js';

export { createClaudeParser } from './events.js';
export { toStopReason } from './shapes.js';
export { toUsage as toClaudeUsage } from './usage.js';
export { toClaudeError, LOGIN_FIX as CLAUDE_LOGIN_FIX } from './errors.js';
export { DEFAULT_SYSTEM_PROMPT } from './invocation.js';

// Ids the claude CLI 2.1.197 knows; the aliases resolve to whatever is current for the login
// (observed: sonnet -> claude-sonnet-5, opus -> claude-opus-4-8, haiku -> claude-haiku-4-5), and
// take that model's output cap. Output caps from Anthropic's model pages
// (platform.claude.com/docs/en/models/<model>/overview): 128K from the 4.6 models on, 64K for the
// 4.5 ones; the API refuses a larger max_tokens.
const CREATED = 1764547200; // 2025-12-01
const K = 1000;
const MODELS: ModelEntry[] = (
  [
    ['sonnet', 128 * K],
    ['opus', 128 * K],
    ['haiku', 64 * K],
    ['claude-sonnet-5', 128 * K],
    ['claude-opus-4-8', 128 * K],
    ['claude-opus-4-7', 128 * K],
    ['claude-opus-4-6', 128 * K],
    ['claude-sonnet-4-6', 128 * K],
    ['claude-opus-4-5', 64 * K],
    ['claude-sonnet-4-5', 64 * K],
    ['claude-haiku-4-5', 64 * K],
  ] as const
).map(([id, maxOutputTokens]) => ({ id, cliModel: id, created: CREATED, maxOutputTokens }));

/** Full claude model ids not in the table are passed to the CLI, which is the authority on them. */
const PASS_THROUGH = /^claude-[a-z0-9][a-z0-9.-]{1,80}$/;

/** Host variables that mark a run as nested inside another Claude Code session: never passed. */
function isNestedSessionVar(name: string): boolean {
  return name === 'CLAUDECODE' || name.startsWith('CLAUDE_CODE_') || name.startsWith('CLAUDE_AGENT_SDK');
}

/** Provider credentials in the environment: only passed when the operator names them. */
const API_KEY_VARS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'];

const CREDENTIALS_FILE = '.credentials.json';
/**
 * Where claude keeps its login file and takes its refresh locks (2.1.197 and 2.1.332; not
 * documented: the real-CLI tier checks it on both pinned versions).
 */
const SECURE_STORAGE_VAR = 'CLAUDE_SECURESTORAGE_CONFIG_DIR';

/** The operator's claude login file: $CLAUDE_CONFIG_DIR/.credentials.json, else ~/.claude/.credentials.json. */
export function defaultClaudeCredentials(hostEnv: Readonly<Record<string, string | undefined>>): string {
  return join(hostEnv.CLAUDE_CONFIG_DIR || join(hostEnv.HOME || homedir(), '.claude'), '.credentials.json');
}

export interface ClaudeOptions {
  bin: string;
  /** The operator's real claude login file (`~/.claude/.credentials.json`), linked into each run's home. */
  credentials: string;
  /** Host variable names handed through (operator opt-in). */
  passEnv: readonly string[];
  /** Extra variables set for every run (operator opt-in). */
  env: Readonly<Record<string, string>>;
}

/** The claude backend: `claude -p --output-format stream-json` per turn. */
export function createClaudeBackend(opts: ClaudeOptions): Backend {
  const nextId = createControlIds();
  // The machine's login file is not linked into runs: claude writes a refreshed token to a temp
  // file renamed over the link (which then stops being one, and the owner's file keeps a refresh
  // token the refresh used up), and it takes its refresh locks in the run's own ~/.claude, so runs
  // do not exclude one another. Pointed at the owner's directory instead, every run and the
  // owner's own claude read and write the one file under the same locks, and re-read it before
  // refreshing: one refresh (observed with 2.1.197 and 2.1.332, 10 runs at once). A file of
  // another name (`--claude-credentials`) cannot be found there: it is linked, as before.
  const store = basename(opts.credentials) === CREDENTIALS_FILE ? dirname(opts.credentials) : undefined;
  const fixed: Record<string, string> = {
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  return {
    id: 'claude',
    bin: opts.bin,
    owner: 'claude-cli',
    status: {
      versionArgs: ['--version'],
      loginArgs: ['auth', 'status'],
      loggedIn: (code, stdout) => code === 0 && !/"loggedIn":\s*false/.test(stdout),
      // claude 2.1.197 `auth status`: "authMethod" is "claude.ai" for the login file, "api_key"
      // (ANTHROPIC_API_KEY) or "oauth_token" (CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_AUTH_TOKEN) otherwise.
      keyLogin: (stdout) => /"authMethod":\s*"(api_key|oauth_token)"/.test(stdout),
      loginCommand: LOGIN_COMMAND,
      installCommand: INSTALL_COMMAND,
    },
    // claude 2.1.197 rejects tool_use ids outside [A-Za-z0-9_-]; it takes image blocks on stream-json
    // input, and document blocks (passed on to the API as sent, 2.1.197 and 2.1.332).
    transcriptPolicy: (limits) => ({ toolIdPattern: /[A-Za-z0-9_-]/, images: true, documents: true, limits }),
    models: MODELS,
    acceptsModel: (id) => PASS_THROUGH.test(id),
    credentials: [opts.credentials],
    apiKeyVars: API_KEY_VARS,
    links(turn) {
      // A login's setup token (or API key) goes in the environment: no credentials file, nothing to refresh.
      const links: Link[] = turn.login || store ? [] : [{ from: opts.credentials, to: `.claude/${CREDENTIALS_FILE}` }];
      // Session transcripts live in ~/.claude/projects/<cwd>/: keep them in the slot's persistent dir.
      if (turn.session && turn.session.mode !== 'ephemeral')
        links.push({ from: 'claude-projects', to: '.claude/projects', persistent: true });
      return links;
    },
    // claude 2.1.332 writes to <tmpdir>/claude-<uid>/ (an image it was sent, fswatch probes) and
    // leaves it there: its temp dir is the run's own, removed with it.
    homeDirs: ['tmp'],
    envPolicy(turn: Turn, place: Place): EnvPolicy {
      const own = turn.login ? withoutApiKeys(opts.env, API_KEY_VARS) : opts.env;
      const set: Record<string, string> = { ...own, ...fixed, TMPDIR: `${place.home}/tmp` };
      if (turn.maxOutputTokens) set.CLAUDE_CODE_MAX_OUTPUT_TOKENS = String(turn.maxOutputTokens);
      const thinking = toThinkingTokens(turn.reasoning);
      if (thinking !== undefined) set.MAX_THINKING_TOKENS = thinking;
      // A call of the client's function waits for the client's next request: the CLI must wait as long.
      if (turn.tools) set.MCP_TOOL_TIMEOUT = String(turn.tools.timeoutMs);
      // 2.1.332 defers MCP tools behind its ToolSearch tool by default: the client's functions are
      // offered to the model as tools of their own instead.
      if (turn.tools) set.ENABLE_TOOL_SEARCH = 'false';
      if (turn.login?.token) set.CLAUDE_CODE_OAUTH_TOKEN = turn.login.token;
      else if (turn.login?.apiKey) set.ANTHROPIC_API_KEY = turn.login.apiKey;
      else if (!turn.login && store) set[SECURE_STORAGE_VAR] = store;
      const pass = turn.login ? withoutApiKeys(opts.passEnv, API_KEY_VARS) : opts.passEnv;
      return toEnvPolicy(set, pass, API_KEY_VARS, isNestedSessionVar);
    },
    prepare: (turn, place) => toClaudeInvocation(opts.bin, turn, place, nextId),
    createParser: () => createClaudeParser(),
    spawnError: (exit) => toSpawnError(opts.bin, exit),
    forks: { keepsSource: false },
    live: {
      coldIsLive: true,
      input: (prompt) => toUserLine(prompt),
      ready: (line) => (isControlResponse(line) ? true : undefined),
      spare: { init: (system, outputSchema) => toInit(nextId, system, outputSchema) },
    },
  };
}
