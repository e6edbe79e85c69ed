import type { Place, Prepared, Turn } from '../types.js';
import { toEffortConfig } from './reasoning.js';
import { toStrictSchema } from './schema.js';

/** Profile olp writes into each run's CODEX_HOME; it carries the system prompt as developer instructions. */
export const PROFILE = 'olp';
export const PROFILE_FILE = `home/.codex/${PROFILE}.config.toml`;

/** Agent features switched off in chat mode (from `codex features list`, codex-cli 0.171). */
export const DISABLED_FEATURES = [
  'shell_tool',
  'apps',
  'plugins',
  'browser_use',
  'computer_use',
  'in_app_browser',
  'sleep_tool',
  'skill_search',
  'tool_suggest',
];

/** A TOML basic string: JSON's escapes are a subset TOML accepts. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/**
 * The codex command line for one turn: `codex exec --json … -` with the prompt on stdin and the
 * system prompt in a profile file (never in argv), a read-only sandbox, no approvals, the agent's
 * tools disabled; `exec resume <thread>` continues a session, `--ephemeral` keeps none.
 */
const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export function toCodexInvocation(bin: string, turn: Turn, place: Place, config: readonly string[]): Prepared {
  const s = turn.session;
  // Images go to codex as files in the workspace (`--image=<file>`, one per image).
  const images = (turn.prompt.images ?? []).map((img, i) => ({
    name: `images/${i}.${EXT[img.mediaType]}`,
    content: img.data,
  }));
  const args = [
    'exec',
    ...images.map((f) => `--image=${place.path(f.name)}`),
    '--json',
    '--skip-git-repo-check',
    '--sandbox',
    'read-only',
    '-c',
    'approval_policy="never"',
    '--profile',
    PROFILE,
    ...DISABLED_FEATURES.flatMap((f) => ['--disable', f]),
    ...(turn.cliModel && turn.cliModel !== 'codex' ? ['--model', turn.cliModel] : []),
    ...config.flatMap((c) => ['-c', c]),
    // After the operator's overrides: a request's effort wins over a configured default.
    ...toEffortConfig(turn.reasoning).flatMap((c) => ['-c', c]),
    ...(turn.tools ? toolConfig(turn.tools).flatMap((c) => ['-c', c]) : []),
    ...(turn.outputSchema ? ['--output-schema', place.path(OUTPUT_SCHEMA_FILE)] : []),
    ...(s?.mode === 'resumed' && s.sessionId
      ? ['resume', s.sessionId]
      : s?.mode === 'fresh'
        ? s.forkOf
          ? ['fork', s.forkOf]
          : []
        : ['--ephemeral']),
    '-',
  ];
  // codex 0.171 has no setting for an output cap (--strict-config rejects model_max_output_tokens),
  // so max_tokens is documented as ignored for codex models.
  const profile = turn.prompt.system ? `developer_instructions = ${tomlString(turn.prompt.system)}` : '';
  const schema = turn.outputSchema
    ? [{ name: OUTPUT_SCHEMA_FILE, content: JSON.stringify(toStrictSchema(turn.outputSchema)) }]
    : [];
  return {
    invocation: { command: bin, args, stdin: turn.prompt.text },
    files: [{ name: PROFILE_FILE, content: `${profile}\n` }, ...images, ...schema],
  };
}

/** The reply's JSON Schema, in the strict form the Responses API takes (see schema.ts). */
export const OUTPUT_SCHEMA_FILE = 'output-schema.json';

/** The variable that carries the bridge's token to codex (never argv). */
export const TOOLS_TOKEN_VAR = 'OLP_TOOLS_TOKEN';

/**
 * The client's functions as olp's MCP server (codex 0.171): tools answered without approval,
 * called in parallel, offered to the model directly rather than inside its code-mode tool, and
 * a call may wait (parked) longer than the client takes to answer. A server that cannot start
 * fails the turn instead of running it without the tools. How the token reaches codex is the
 * caller's: a variable for `exec`, a header on stdin for the app-server.
 */
export function toToolServer(tools: NonNullable<Turn['tools']>): Record<string, unknown> {
  return {
    url: tools.endpoint,
    required: true,
    default_tools_approval_mode: 'approve',
    supports_parallel_tool_calls: true,
    omit_tools_from: ['code_mode'],
    tool_timeout_sec: Math.ceil(tools.timeoutMs / 1000),
  };
}

/** `toToolServer` as `-c` overrides, the token in a variable (never argv). */
function toolConfig(tools: NonNullable<Turn['tools']>): string[] {
  const s = 'mcp_servers.olp';
  // JSON's strings, numbers, booleans and arrays of them are TOML too.
  const settings = { ...toToolServer(tools), bearer_token_env_var: TOOLS_TOKEN_VAR };
  return Object.entries(settings).map(([k, v]) => `${s}.${k}=${JSON.stringify(v)}`);
}

/** Where codex keeps its state for this run: a fresh CODEX_HOME inside the run's home. */
export function codexHome(place: Place): string {
  return `${place.home}/.codex`;
}
