import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import { END_TURN } from '../../core/index.js';
import type { BackendEvent, EventParser, ToolStep, TurnOutcome } from '../types.js';
import { LIMIT_TEXT } from '../../plan/index.js';
import { spentReport } from './errors.js';
import { Attempt } from './attempt.js';
import { Thoughts } from './thoughts.js';
import { toCodexOutcome } from './outcome.js';
import { toRawCodexUsage } from './usage.js';

interface Line {
  type?: string;
  thread_id?: string;
  item?: Item;
  usage?: unknown;
  error?: { message?: string };
  message?: string;
}

interface Item {
  id?: string;
  type?: string;
  text?: string;
  message?: unknown;
  server?: string;
  tool?: string;
  arguments?: unknown;
}

/**
 * Reads `codex exec --json` output. Agent messages arrive whole in `item.completed` (codex 0.171
 * sends no text deltas), so each is forwarded the moment it is complete; `item.updated` text, if a
 * build sends it, is forwarded as it grows. A `reasoning` item (the model's reasoning summary,
 * also only completed) is thinking. Usage is the thread's running total (`turn.completed`);
 * the session layer turns it into this request's share.
 *
 * When the provider's stream breaks before `response.completed`, codex asks the model again
 * (`Reconnecting... n/5`): a message it completed from the broken stream is not part of the
 * answer (the turn keeps only the retried one; 0.171, captured). At the retry the parser says
 * `abandoned` for everything it forwarded since the model was last asked, or since the last call
 * of the client's functions started: codex keeps a started call (see createToolCalls).
 */
export function createCodexParser(model?: string): EventParser {
  return new ExecTurn(model);
}

/** One `codex exec --json` run as it is read: each kind of line is a step (see createCodexParser). */
class ExecTurn implements EventParser {
  readonly unknown = new Set<string>();
  private readonly reader = createLineReader<Line>();
  /** What was forwarded since the model was last asked, and the calls of the client's functions. */
  private readonly attempt = new Attempt();
  /** Characters of each agent message forwarded so far. */
  private readonly sent = new Map<string, number>();
  private threadId: string | undefined;
  /** The model's reasoning summary, as thinking. */
  private readonly thoughts = new Thoughts();
  private completed: unknown;
  private failed: string | undefined;
  private lastError: string | undefined;

  constructor(private readonly model: string | undefined) {}

  get complete(): boolean {
    return this.completed !== undefined || this.failed !== undefined;
  }

  get toolStep(): ToolStep | undefined {
    return this.attempt.toolStep;
  }

  continueAfterTools(): void {
    this.attempt.continueAfterTools();
  }

  push(raw: string): BackendEvent[] {
    const line = this.reader.read(raw);
    if (!line) return [];
    switch (line.type) {
      case 'thread.started':
        return this.threadStarted(line.thread_id);
      case 'item.started':
        return this.itemStarted(line.item);
      case 'item.updated':
      case 'item.completed':
        return this.item(line.item);
      case 'turn.started':
        return [];
      case 'turn.completed':
        this.completed = line.usage;
        return [];
      case 'turn.failed':
        return this.turnFailed(line.error?.message ?? 'turn failed');
      case 'error':
        return typeof line.message === 'string' ? this.error(line.message) : [];
      default:
        if (typeof line.type === 'string') this.unknown.add(line.type);
        return [];
    }
  }

  finish(exit: ExitInfo): TurnOutcome {
    const { threadId, failed, lastError, model } = this;
    const stopReason = this.completed !== undefined && !failed ? END_TURN : undefined;
    const total = toRawCodexUsage(this.completed);
    return toCodexOutcome(
      stopReason,
      { total, threadId, failed, lastError, summary: this.reader.summary(), model },
      exit,
    );
  }

  private threadStarted(id: string | undefined): BackendEvent[] {
    if (typeof id !== 'string' || this.threadId) return [];
    this.threadId = id;
    return [{ type: 'session', sessionId: id }];
  }

  /** A call of olp's MCP server (the client's functions) starts. */
  private itemStarted(item: Item | undefined): BackendEvent[] {
    if (item?.type !== 'mcp_tool_call' || item.server !== 'olp' || typeof item.tool !== 'string' || !item.id) return [];
    return this.attempt.call(item.id, item.tool, item.arguments);
  }

  private item(item: Item | undefined): BackendEvent[] {
    // The model's reasoning summary, whole (0.171 sends it only completed); what a model gives none of is ''.
    if (item?.type === 'reasoning' && typeof item.text === 'string')
      return this.thoughts.whole(item.id ?? 'reasoning', item.text);
    if (item?.type === 'agent_message' && typeof item.text === 'string')
      return this.attempt.said(this.message(item.id ?? `m${this.reader.summary().parsedLines}`, item.text));
    // codex 0.171: a transport fallback is reported as an error item mid-retry.
    if (item?.type === 'error') return this.attempt.retry(String(item.message ?? 'error'));
    return [];
  }

  /** The part of an agent message's text not yet forwarded (blank line between separate messages). */
  private message(id: string, text: string): BackendEvent[] {
    const already = this.sent.get(id);
    this.sent.set(id, Math.max(text.length, already ?? 0));
    if (already === undefined) {
      const sep = this.attempt.messages++ > 0 ? '\n\n' : '';
      return text ? [{ type: 'text', text: sep + text }] : [];
    }
    return text.length > already ? [{ type: 'text', text: text.slice(already) }] : [];
  }

  private turnFailed(message: string): BackendEvent[] {
    this.failed = message;
    return this.lastError === message ? [] : spentReport(message);
  }

  private error(message: string): BackendEvent[] {
    this.lastError = message;
    if (LIMIT_TEXT.test(message)) return spentReport(message);
    // codex 0.171: `Reconnecting... n/5 (…)`, then `Reconnecting... waiting for network (…)` forever.
    return /^Reconnecting\b/.test(message) ? this.attempt.retry(message) : [];
  }
}
