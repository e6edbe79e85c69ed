import type { Prompt } from '../../transcript/index.js';
import type { Place, Prepared, Turn } from '../types.js';
import { DISABLED_FEATURES, toToolServer } from './invocation.js';
import { codexEffort } from './reasoning.js';
import { toStrictSchema } from './schema.js';

// `codex app-server` (codex-cli 0.171): JSON-RPC messages, one per line, without a "jsonrpc"
// field: requests {id, method, params}, responses {id, result | error}, notifications {method,
// params}. olp keeps one per live session slot: it loads the thread a cold `codex exec` turn left
// (thread/resume) and takes the conversation's next turns (turn/start), each answered by the
// turn's notifications up to turn/completed.

const RESUME_ID = 'olp-resume';
/** The id of olp's turn/interrupt requests: their answers are no turn's (see toTurnInterrupt). */
export const INTERRUPT_ID = 'olp-interrupt';

/** A backend's own numbering of its turn/start requests (`olp-turn-1`, …): nothing counted at module scope. */
export function createTurnIds(): () => string {
  let n = 0;
  return () => `olp-turn-${++n}`;
}

/**
 * The app-server command line and its first lines: initialize, initialized, thread/resume. A
 * turn offering the client's functions binds olp's MCP server to the thread in the resume's
 * config (per thread in 0.171; the bridge's token as a header, on stdin): the thread's later
 * turns reach the same bridge session, and a server that cannot start fails the resume.
 */
export function toAppServerInvocation(bin: string, turn: Turn, place: Place, config: readonly string[]): Prepared {
  const threadId = turn.session?.sessionId;
  if (!threadId) throw new Error('an app-server worker resumes an existing thread');
  const args = [
    'app-server',
    ...DISABLED_FEATURES.flatMap((f) => ['--disable', f]),
    '-c',
    'approval_policy="never"',
    ...config.flatMap((c) => ['-c', c]),
  ];
  const lines = [
    {
      id: 'olp-init',
      method: 'initialize',
      params: {
        clientInfo: { name: 'olp', title: null, version: '1' },
        capabilities: { experimentalApi: false, requestAttestation: false },
      },
    },
    { method: 'initialized' },
    {
      id: RESUME_ID,
      method: 'thread/resume',
      params: {
        threadId,
        cwd: place.cwd,
        approvalPolicy: 'never',
        sandbox: 'read-only',
        ...(turn.cliModel && turn.cliModel !== 'codex' ? { model: turn.cliModel } : {}),
        ...threadConfig(turn),
      },
    },
  ];
  return { invocation: { command: bin, args, stdin: lines.map((l) => `${JSON.stringify(l)}\n`).join('') }, files: [] };
}

/**
 * thread/resume's `config`: olp's MCP server when the turn offers the client's functions, and the
 * turn's effort (a resumed thread takes it only here, not from `-c`; codex 0.171).
 */
function threadConfig(turn: Turn): { config?: Record<string, unknown> } {
  const effort = codexEffort(turn.reasoning);
  const tools = turn.tools
    ? {
        mcp_servers: {
          olp: { ...toToolServer(turn.tools), http_headers: { Authorization: `Bearer ${turn.tools.token}` } },
        },
      }
    : {};
  const config = { ...tools, ...(effort ? { model_reasoning_effort: effort } : {}) };
  return Object.keys(config).length > 0 ? { config } : {};
}

/** Up once the thread is loaded; failed when the resume was refused. */
export function appServerReady(line: string): boolean | undefined {
  if (!line.includes(`"${RESUME_ID}"`)) return undefined;
  try {
    const msg = JSON.parse(line) as { id?: unknown; result?: unknown; error?: unknown };
    if (msg.id !== RESUME_ID) return undefined;
    return msg.result !== undefined && msg.error === undefined;
  } catch {
    return undefined;
  }
}

/** One more user turn on a loaded thread: text, then images as data URLs. */
export function toTurnStart(
  nextId: () => string,
  prompt: Pick<Prompt, 'text' | 'images'>,
  threadId: string,
  outputSchema?: Record<string, unknown>,
): string {
  const input = [
    { type: 'text', text: prompt.text, text_elements: [] },
    ...(prompt.images ?? []).map((img) => ({
      type: 'image',
      url: `data:${img.mediaType};base64,${img.data.toString('base64')}`,
    })),
  ];
  // outputSchema holds for this turn only (codex 0.171 TurnStartParams).
  const schema = outputSchema ? { outputSchema: toStrictSchema(outputSchema) } : {};
  return `${JSON.stringify({ id: nextId(), method: 'turn/start', params: { threadId, input, ...schema } })}\n`;
}

/**
 * Interrupts the thread's running turn (0.171 TurnInterruptParams): codex restates the thread's
 * token total as of the last reply it finished (when there is one: the interrupted reply is
 * counted nowhere), answers `{}` and ends the turn with `turn/completed`, status `interrupted`.
 * The process serves the next turn, whose input holds the interrupted turn's prompt and a
 * `<turn_aborted>` note but not the partial reply (captured:
 * test/fixtures/reference/codex-0.171.0-app-server-turn-interrupt.jsonl). An interrupt that
 * arrives after the turn ended is answered with an error ("no active turn to interrupt").
 */
export function toTurnInterrupt(threadId: string, turnId: string): string {
  return `${JSON.stringify({ id: INTERRUPT_ID, method: 'turn/interrupt', params: { threadId, turnId } })}\n`;
}
