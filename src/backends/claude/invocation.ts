import { isDocument, type Prompt } from '../../transcript/index.js';
import type { Place, Prepared, Turn } from '../types.js';
import { toEffortArgs } from './reasoning.js';

/** Used when the client sends no system or developer message. */
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

export const SYSTEM_PROMPT_FILE = 'system-prompt.txt';

/**
 * `--session-id` creates (refused if the id exists), `--resume` continues; otherwise nothing is
 * kept. A fork continues the old session's history under the new id (`--fork-session` is what
 * lets `--session-id` go with `--resume`, in 2.1.197 and 2.1.332 alike; the old session's file
 * is read, not written).
 */
function sessionArgs(turn: Turn): string[] {
  // A spare keeps its session, under the id it picks itself (reported in `system/init`).
  if (turn.prestart) return [];
  const s = turn.session;
  if (s?.mode === 'fresh' && s.sessionId && s.forkOf)
    return ['--resume', s.forkOf, '--fork-session', '--session-id', s.sessionId];
  if (s?.mode === 'fresh' && s.sessionId) return ['--session-id', s.sessionId];
  if (s?.mode === 'resumed' && s.sessionId) return ['--resume', s.sessionId];
  return ['--no-session-persistence'];
}

/**
 * The claude command line for one turn. The prompt goes on stdin and the system prompt through a
 * file, so nothing a client sends can appear in argv (a `--`-prefixed prompt would be read as a flag).
 * Chat mode: no built-in tools, no MCP servers, no user/project settings, no slash commands.
 */
export function toClaudeInvocation(bin: string, turn: Turn, place: Place, nextId: NextId): Prepared {
  const images = turn.prompt.images ?? [];
  // Images (and documents) need the stream-json input protocol: one user message with text and image blocks. A
  // live run uses it always: one user line per turn, stdin left open for the next.
  // A schema goes with the `initialize` control request (never argv): stream-json input too.
  const streamed = images.length > 0 || turn.live === true || turn.outputSchema !== undefined;
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-partial-messages',
    '--model',
    turn.cliModel,
    ...toEffortArgs(turn.reasoning),
    '--tools=', // `=` form: --tools is variadic and would swallow a following value
    '--strict-mcp-config',
    // The client's functions: olp's own MCP server for this run, and only its tools allowed.
    ...(turn.tools
      ? [
          '--mcp-config',
          place.path(MCP_CONFIG_FILE),
          `--allowedTools=${turn.tools.specs.map((t) => `mcp__olp__${t.name}`).join(',')}`,
        ]
      : []),
    '--setting-sources=',
    '--disable-slash-commands',
    ...sessionArgs(turn),
    // A spare gets its system prompt from the `initialize` control request instead.
    ...(turn.prestart ? [] : ['--system-prompt-file', place.path(SYSTEM_PROMPT_FILE)]),
    ...(streamed || turn.prestart ? ['--input-format', 'stream-json'] : []),
  ];
  if (turn.prestart) return { invocation: { command: bin, args, stdin: toPing(nextId), live: true }, files: [] };
  const mcp = turn.tools
    ? [
        {
          name: MCP_CONFIG_FILE,
          content: JSON.stringify({ mcpServers: { olp: { type: 'http', url: turn.tools.url } } }),
        },
      ]
    : [];
  return {
    invocation: {
      command: bin,
      args,
      stdin: streamed
        ? (turn.outputSchema ? toSchemaInit(turn.outputSchema) : '') + toUserLine(turn.prompt)
        : turn.prompt.text,
      ...(turn.live ? { live: true } : {}),
    },
    files: [{ name: SYSTEM_PROMPT_FILE, content: turn.prompt.system ?? DEFAULT_SYSTEM_PROMPT }, ...mcp],
  };
}

/** The MCP server config of a run with the client's functions (its URL holds the run's token). */
export const MCP_CONFIG_FILE = 'mcp.json';

/** The next control request id of one backend (`olp-1`, `olp-2`, …). */
export type NextId = () => string;

/** A backend's own numbering of its control requests: nothing is counted at module scope. */
export function createControlIds(): NextId {
  let n = 0;
  return () => `olp-${++n}`;
}

/** A control request on claude's stream-json input. */
function control(nextId: NextId, request: Record<string, unknown>): string {
  return `${JSON.stringify({ type: 'control_request', request_id: nextId(), request })}\n`;
}

/**
 * Sets the system prompt of a claude started without one, and the schema of its replies; only
 * before its first user line (both then hold for the life of the process).
 */
export function toInit(nextId: NextId, system: string | null, outputSchema?: Record<string, unknown>): string {
  return control(nextId, {
    subtype: 'initialize',
    systemPrompt: system ?? DEFAULT_SYSTEM_PROMPT,
    ...(outputSchema ? { jsonSchema: outputSchema } : {}),
  });
}

/**
 * The schema of a claude's replies (its system prompt came with the command line). Its request
 * id is fixed: the line is part of what a recording identifies the run by.
 */
function toSchemaInit(outputSchema: Record<string, unknown>): string {
  const request = { subtype: 'initialize', jsonSchema: outputSchema };
  return `${JSON.stringify({ type: 'control_request', request_id: 'olp-schema', request })}\n`;
}

/** `get_binary_version`: answered at once, without a network call. */
export function toPing(nextId: NextId): string {
  return control(nextId, { subtype: 'get_binary_version' });
}

/** A `control_response` line (to a ping or an initialize). */
export function isControlResponse(line: string): boolean {
  return (
    line.startsWith('{"type":"control_response"') || /^\{[^]*"type"\s*:\s*"control_response"/.test(line.slice(0, 200))
  );
}

/** One user turn on claude's stream-json input: text, then image and document (PDF) blocks, in order. */
export function toUserLine(prompt: Pick<Prompt, 'text' | 'images'>): string {
  const images = prompt.images ?? [];
  const content = images.length
    ? [
        { type: 'text', text: prompt.text },
        ...images.map((img) => ({
          type: isDocument(img) ? 'document' : 'image',
          source: { type: 'base64', media_type: img.mediaType, data: img.data.toString('base64') },
        })),
      ]
    : prompt.text;
  const line = { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' };
  return `${JSON.stringify(line)}\n`;
}
