import { canonicalJson } from '../transcript/index.js';
import type { ToolSpec } from './spec.js';

/** A call the model made: its tool_use id, the function and its arguments. */
export interface ToolUse {
  id: string;
  name: string;
  arguments: string;
}

/** A tool call the CLI has asked for and not had answered. */
export interface PendingCall {
  toolUseId: string;
  name: string;
}

/** One run's session on the bridge: what the run's owner tells it and asks of it. */
export interface BridgeSession {
  readonly token: string;
  /** The MCP endpoint for the CLI's --mcp-config, the token in its path. */
  readonly url: string;
  /** The same endpoint without the token, for a CLI that sends it as a bearer token instead. */
  readonly endpoint: string;
  /**
   * The model's tool calls of the step just ended, in order (matched against the CLI's MCP calls).
   * `exact`: match them on their arguments only (calls reported one by one, codex), never on the
   * name alone, which could give one call another's result.
   */
  expect(uses: readonly ToolUse[], opts?: { exact?: boolean }): void;
  /** The client's results by tool_use id; calls already waiting are answered at once, the rest when asked. */
  provide(results: ReadonlyMap<string, string>): void;
  /** Tool calls the CLI has asked for and not had answered. */
  readonly waiting: readonly PendingCall[];
  /** How many of the expected calls the CLI has not asked for yet. */
  readonly unasked: number;
  /** How many calls came before the CLI's report of them (codex) and wait for it. */
  readonly early: number;
  /** Ends the session: waiting calls get an error result, and later calls are refused. */
  close(): void;
}

/** A call the CLI made, held until the client's result comes. */
export interface Waiting {
  toolUseId: string;
  name: string;
  answer(text: string, isError?: boolean): void;
}

/** A call that came before the model's call it answers was known (codex calls as it reports). */
export interface Early {
  name: string;
  args: unknown;
  meta: Record<string, unknown> | undefined;
  answer(text: string, isError?: boolean): void;
}

/** A session's state, shared by the MCP handler and the run's owner. */
export interface Session {
  tools: readonly ToolSpec[];
  uses: ToolUse[];
  /** tool_use ids the CLI has already called. */
  called: Set<string>;
  results: Map<string, string>;
  waiting: Waiting[];
  early: Early[];
  /** Uses matched on their arguments only. */
  exact: Set<string>;
  closed: boolean;
}

/** A new session's empty state for one run's functions. */
export function createSession(tools: readonly ToolSpec[]): Session {
  return {
    tools,
    uses: [],
    called: new Set(),
    results: new Map(),
    waiting: [],
    early: [],
    exact: new Set(),
    closed: false,
  };
}

/** The tool_use a CLI's MCP call answers: by the id it carries, else by name and arguments in order. */
export function match(
  s: Session,
  name: string,
  args: unknown,
  meta: Record<string, unknown> | undefined,
): string | undefined {
  const byMeta = meta?.['claudecode/toolUseId'];
  if (typeof byMeta === 'string' && s.uses.some((u) => u.id === byMeta)) return byMeta;
  const open = s.uses.filter((u) => !s.called.has(u.id) && u.name === name);
  const same = open.find((u) => sameJson(u.arguments, args));
  return (same ?? open.find((u) => !s.exact.has(u.id)))?.id;
}

/** A call matched to the model's tool_use: answered now when its result is in, else held. */
export function take(s: Session, id: string, name: string, answer: Waiting['answer']): void {
  s.called.add(id);
  const ready = s.results.get(id);
  if (ready !== undefined) answer(ready);
  else s.waiting.push({ toolUseId: id, name, answer });
}

/** The run owner's handle on a session reached at `base` with `token`; `onClose` forgets it. */
export function toBridgeSession(s: Session, token: string, base: string, onClose: () => void): BridgeSession {
  return {
    token,
    url: `${base}/mcp/${token}`,
    endpoint: `${base}/mcp`,
    expect(uses, opts) {
      s.uses.push(...uses);
      if (opts?.exact) for (const u of uses) s.exact.add(u.id);
      for (const e of [...s.early]) {
        const id = match(s, e.name, e.args, e.meta);
        if (!id) continue;
        s.early.splice(s.early.indexOf(e), 1);
        take(s, id, e.name, e.answer);
      }
    },
    provide(results) {
      for (const [id, text] of results) s.results.set(id, text);
      // The turn goes on: calls of the last step the CLI never made are over.
      s.uses = s.uses.filter((u) => s.called.has(u.id) || results.has(u.id));
      for (const w of [...s.waiting]) {
        const text = s.results.get(w.toolUseId);
        if (text === undefined) continue;
        s.waiting.splice(s.waiting.indexOf(w), 1);
        w.answer(text);
      }
    },
    get waiting() {
      return s.waiting.map((w) => ({ toolUseId: w.toolUseId, name: w.name }));
    },
    get unasked() {
      return s.uses.filter((u) => !s.called.has(u.id)).length;
    },
    get early() {
      return s.early.length;
    },
    close() {
      s.closed = true;
      onClose();
      for (const w of s.waiting.splice(0)) w.answer('The client did not return a result for this call.', true);
      for (const e of s.early.splice(0)) e.answer('This call does not match a tool call of the model.', true);
    },
  };
}

/** Whether a JSON text and a value hold the same data (key order aside). */
function sameJson(text: string, value: unknown): boolean {
  try {
    return canonicalJson(JSON.parse(text)) === canonicalJson(value);
  } catch {
    return false;
  }
}
