import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import { END_TURN } from '../../core/index.js';
import type { BackendEvent, EventParser, TurnOutcome } from '../types.js';
import { LIMIT_TEXT } from '../../plan/index.js';
import { spentReport, toCodexError } from './errors.js';
import { createToolCalls } from './tool-calls.js';
import { toCodexUsage, toRawCodexUsage } from './usage.js';

interface Line {
  type?: string;
  thread_id?: string;
  item?: { id?: string; type?: string; text?: string; server?: string; tool?: string; arguments?: unknown };
  usage?: unknown;
  error?: { message?: string };
  message?: string;
}

/**
 * Reads `codex exec --json` output. Agent messages arrive whole in `item.completed` (codex 0.171
 * sends no text deltas), so each is forwarded the moment it is complete; `item.updated` text, if a
 * build sends it, is forwarded as it grows. Usage is the thread's running total (`turn.completed`);
 * the session layer turns it into this request's share.
 *
 * When the provider's stream breaks before `response.completed`, codex asks the model again
 * (`Reconnecting... n/5`): a message it completed from the broken stream is not part of the
 * answer (the turn keeps only the retried one; 0.171, captured). At the retry the parser says
 * `abandoned` for everything it forwarded since the model was last asked, or since the last call
 * of the client's functions started: codex keeps a started call (see createToolCalls).
 */
export function createCodexParser(model?: string): EventParser {
  const reader = createLineReader<Line>();
  let threadId: string | undefined;
  let completed: unknown;
  let failed: string | undefined;
  let lastError: string | undefined;
  let messages = 0;
  const sent = new Map<string, number>();
  // Calls of the client's functions (olp's MCP server) since the turn began or last went on.
  const tools = createToolCalls();
  const unknown = new Set<string>();
  /** What was forwarded since the model was last asked (the turn began, or went on after tools). */
  let attempt = { text: '', events: 0, messages: 0 };

  function counted(events: BackendEvent[]): BackendEvent[] {
    for (const ev of events) {
      if (ev.type !== 'text') continue;
      attempt.text += ev.text;
      attempt.events++;
    }
    return events;
  }

  /** A started call stays (see createToolCalls): what came before it cannot be taken back either. */
  function call(events: BackendEvent[]): BackendEvent[] {
    if (events.length > 0) attempt = { text: '', events: 0, messages };
    return events;
  }

  /** codex asks the model again: what the broken attempt produced is void. */
  function retry(message: string): BackendEvent[] {
    const gone = attempt;
    attempt = { text: '', events: 0, messages: gone.messages };
    messages = gone.messages;
    return [
      ...(gone.events > 0 ? [{ type: 'abandoned' as const, text: gone.text, events: gone.events }] : []),
      { type: 'retry', message },
    ];
  }

  /** The part of an agent message's text not yet forwarded (blank line between separate messages). */
  function emit(id: string, text: string): BackendEvent[] {
    const already = sent.get(id);
    if (already === undefined) {
      sent.set(id, text.length);
      const sep = messages++ > 0 ? '\n\n' : '';
      return text ? [{ type: 'text', text: sep + text }] : [];
    }
    if (text.length <= already) return [];
    sent.set(id, text.length);
    return [{ type: 'text', text: text.slice(already) }];
  }

  return {
    get complete() {
      return completed !== undefined || failed !== undefined;
    },
    get toolStep() {
      return tools.step;
    },
    unknown,
    continueAfterTools() {
      tools.next();
      attempt = { text: '', events: 0, messages };
    },
    push(raw: string): BackendEvent[] {
      const line = reader.read(raw);
      if (!line) return [];
      switch (line.type) {
        case 'thread.started':
          if (typeof line.thread_id === 'string' && !threadId) {
            threadId = line.thread_id;
            return [{ type: 'session', sessionId: threadId }];
          }
          return [];
        case 'item.started': {
          const item = line.item;
          if (item?.type !== 'mcp_tool_call' || item.server !== 'olp' || typeof item.tool !== 'string' || !item.id)
            return [];
          return call(tools.start(item.id, item.tool, item.arguments));
        }
        case 'item.updated':
        case 'item.completed':
          if (line.item?.type === 'agent_message' && typeof line.item.text === 'string')
            return counted(emit(line.item.id ?? `m${reader.summary().parsedLines}`, line.item.text));
          // codex 0.171: a transport fallback is reported as an error item mid-retry.
          if (line.item?.type === 'error')
            return retry(String((line.item as { message?: unknown }).message ?? 'error'));
          return [];
        case 'turn.started':
          return [];
        case 'turn.completed':
          completed = line.usage;
          return [];
        case 'turn.failed':
          failed = line.error?.message ?? 'turn failed';
          return lastError === failed ? [] : spentReport(failed);
        case 'error':
          if (typeof line.message !== 'string') return [];
          lastError = line.message;
          if (LIMIT_TEXT.test(line.message)) return spentReport(line.message);
          // codex 0.171: `Reconnecting... n/5 (…)`, then `Reconnecting... waiting for network (…)` forever.
          return /^Reconnecting\b/.test(line.message) ? retry(line.message) : [];
        default:
          if (typeof line.type === 'string') unknown.add(line.type);
          return [];
      }
    },

    finish(exit: ExitInfo): TurnOutcome {
      const usage = toCodexUsage(toRawCodexUsage(completed));
      const base = threadId ? { sessionId: threadId } : {};
      if (completed !== undefined && !failed) return { ok: true, stopReason: END_TURN, usage, ...base };
      const error = toCodexError({
        ...(failed !== undefined ? { failed } : {}),
        ...(lastError !== undefined ? { lastError } : {}),
        exit,
        ...reader.summary(),
        ...(model ? { model } : {}),
      });
      return { ok: false, error, usage, ...base };
    },
  };
}
