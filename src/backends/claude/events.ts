import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import type { BackendEvent, EventParser, FinishReason, TurnOutcome } from '../types.js';
import { toClaudeError, type ClaudeResult } from './errors.js';
import { toUsage } from './usage.js';

interface Line {
  type?: string;
  subtype?: string;
  session_id?: string;
  model?: string;
  parent_tool_use_id?: string | null;
  event?: {
    type?: string;
    message?: { id?: string };
    delta?: { type?: string; text?: string; stop_reason?: string | null };
  };
  message?: { id?: string; model?: string; content?: { type?: string; text?: string }[] };
  error?: string;
  usage?: unknown;
  total_cost_usd?: unknown;
}

/** `attempt 3/10: HTTP 529 overloaded_error` from an `api_retry` line. */
function toRetryMessage(line: Line): string {
  const r = line as Line & { attempt?: unknown; max_retries?: unknown; error_status?: unknown };
  const status = typeof r.error_status === 'number' ? `HTTP ${r.error_status} ` : '';
  return `attempt ${String(r.attempt ?? '?')}/${String(r.max_retries ?? '?')}: ${status}${typeof r.error === 'string' ? r.error : 'error'}`;
}

/** Anthropic stop reasons to OpenAI finish reasons. */
export function toFinishReason(stop: string | null | undefined): FinishReason {
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded') return 'length';
  if (stop === 'refusal') return 'content_filter';
  return 'stop';
}

/**
 * Reads `claude -p --output-format stream-json --verbose --include-partial-messages` output.
 * Text comes from `text_delta` stream events as they arrive; if a message arrives without deltas
 * (older CLIs, no partial messages) its `assistant` event's text is used; usage and success come
 * from the `result` line only (the `assistant` usage is a message_start snapshot).
 */
export function createClaudeParser(model?: string): EventParser {
  const reader = createLineReader<Line>();
  let sessionId: string | undefined;
  let result: (ClaudeResult & { usage?: unknown; total_cost_usd?: unknown }) | undefined;
  let assistantError: string | undefined;
  let currentMessage: string | undefined;
  let stopReason: string | null | undefined;
  let emittedAny = false;
  const streamed = new Set<string>();

  function text(t: string): BackendEvent {
    emittedAny = true;
    return { type: 'text', text: t };
  }

  return {
    get complete() {
      return result !== undefined;
    },
    push(raw: string): BackendEvent[] {
      const line = reader.read(raw);
      if (!line) return [];
      const topLevel = line.parent_tool_use_id == null;
      switch (line.type) {
        case 'system':
          // claude 2.1.197: one `api_retry` per failed API attempt (up to 10 by default, ~3 min in all).
          if (line.subtype === 'api_retry') return [{ type: 'retry', message: toRetryMessage(line) }];
          if (line.subtype === 'init' && typeof line.session_id === 'string' && sessionId === undefined) {
            sessionId = line.session_id;
            return [{ type: 'session', sessionId, ...(line.model ? { model: line.model } : {}) }];
          }
          return [];
        case 'stream_event': {
          const ev = line.event;
          if (!topLevel || !ev) return [];
          if (ev.type === 'message_start') currentMessage = ev.message?.id;
          if (ev.type === 'message_delta' && ev.delta && 'stop_reason' in ev.delta) stopReason = ev.delta.stop_reason;
          if (ev.type === 'content_block_delta' && ev.delta?.type === 'text_delta' && typeof ev.delta.text === 'string' && ev.delta.text !== '') {
            if (currentMessage) streamed.add(currentMessage);
            return [text(ev.delta.text)];
          }
          return [];
        }
        case 'assistant': {
          if (!topLevel) return [];
          if (typeof line.error === 'string') assistantError = line.error;
          const msg = line.message;
          // Synthetic messages carry error text ("Not logged in"), never a reply.
          if (!msg || msg.model === '<synthetic>' || line.error || (msg.id && streamed.has(msg.id))) return [];
          const parts = (msg.content ?? []).filter((c) => c.type === 'text' && typeof c.text === 'string' && c.text !== '');
          return parts.map((c) => text(c.text!));
        }
        case 'result':
          result = line as typeof result;
          if (result && !result.is_error && !emittedAny && typeof result.result === 'string' && result.result !== '') {
            return [text(result.result)];
          }
          return [];
        default:
          return []; // unknown and future event types are ignored, per the reference
      }
    },

    finish(exit: ExitInfo): TurnOutcome {
      const usage = result ? toUsage(result.usage, result.total_cost_usd) : null;
      const sid = sessionId ?? (result as { session_id?: string } | undefined)?.session_id;
      const base = sid ? { sessionId: sid } : {};
      if (result && !result.is_error) {
        return { ok: true, finishReason: toFinishReason(result.stop_reason ?? stopReason), usage, ...base };
      }
      const error = toClaudeError({
        ...(result ? { result } : {}),
        ...(assistantError ? { assistantError } : {}),
        exit,
        ...reader.summary(),
        ...(model ? { model } : {}),
      });
      return { ok: false, error, usage, ...base };
    },
  };
}
