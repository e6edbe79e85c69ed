import type { ExitInfo } from '../../process/index.js';
import { createLineReader } from '../common.js';
import type { PlanReport } from '../../plan/index.js';
import { END_TURN } from '../../core/index.js';
import type { BackendEvent, EventParser, TurnOutcome } from '../types.js';
import { spentReport, toCodexError } from './errors.js';
import { createToolCalls } from './tool-calls.js';
import { toCodexUsage } from './usage.js';

// `codex app-server` (codex-cli 0.171): JSON-RPC messages, one per line, without a "jsonrpc"
// field: requests {id, method, params}, responses {id, result | error}, notifications {method,
// params}. olp keeps one per live session slot: it loads the thread a cold `codex exec` turn left
// (thread/resume) and takes the conversation's next turns (turn/start), each answered by the
// turn's notifications up to turn/completed.

interface Message {
  id?: unknown;
  method?: string;
  result?: { turn?: { id?: string } };
  error?: { message?: string };
  params?: {
    threadId?: string;
    turnId?: string;
    itemId?: string;
    delta?: string;
    willRetry?: boolean;
    error?: { message?: string };
    item?: { type?: string; id?: string; text?: string; server?: string; tool?: string; arguments?: unknown };
    turn?: { id?: string; status?: string; error?: { message?: string } | null };
    tokenUsage?: { total?: Record<string, unknown> };
    rateLimits?: RateLimits;
  };
}

interface RateWindow {
  usedPercent?: unknown;
  windowDurationMins?: unknown;
  resetsAt?: unknown;
}

/** `account/rateLimits/updated` (0.171): the ChatGPT plan's windows, from the provider's headers. */
interface RateLimits {
  primary?: RateWindow | null;
  secondary?: RateWindow | null;
  rateLimitReachedType?: unknown;
}

/** The fuller of the two windows as a plan report; undefined when neither is known. */
export function toCodexPlanReport(limits: RateLimits | undefined): PlanReport | undefined {
  const windows = [limits?.primary, limits?.secondary].filter(
    (w): w is RateWindow => !!w && typeof w.usedPercent === 'number',
  );
  if (windows.length === 0) return undefined;
  const w = windows.reduce((a, b) => (n(b.usedPercent) > n(a.usedPercent) ? b : a));
  const minutes = n(w.windowDurationMins);
  const window =
    minutes === 300 ? 'five_hour' : minutes === 10080 ? 'seven_day' : minutes > 0 ? `${minutes}_minutes` : null;
  const utilization = Math.min(1, n(w.usedPercent) / 100);
  const reached = typeof limits?.rateLimitReachedType === 'string' || utilization >= 1;
  return {
    status: reached ? 'rejected' : utilization >= 0.8 ? 'allowed_warning' : 'allowed',
    window,
    resetsAt: n(w.resetsAt) > 0 ? n(w.resetsAt) * 1000 : null,
    utilization,
    overage: false,
  };
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** The app-server's running total in the names `codex exec` uses (so the session layer's rebase applies). */
function toRawTotal(total: Record<string, unknown>): Record<string, number> {
  return {
    input_tokens: n(total.inputTokens),
    cached_input_tokens: n(total.cachedInputTokens),
    cache_write_input_tokens: n(total.cacheWriteInputTokens),
    output_tokens: n(total.outputTokens),
    reasoning_output_tokens: n(total.reasoningOutputTokens),
  };
}

/**
 * Reads one turn of an app-server worker: the agent message's deltas as they come (a message
 * that arrives without deltas is forwarded whole), the thread's running token total as of this
 * turn (an update replayed for an earlier turn is ignored), retries (`error` with willRetry) as
 * retries, and the end at this turn's `turn/completed`. A retry after the provider's stream broke
 * asks the model again: the messages streamed so far (whole or in part) are not the turn's (its
 * `turn/completed` lists only the retried one; 0.171, captured), and are said `abandoned`.
 *
 * A thread given olp's MCP server (see toAppServerInvocation) may call the client's functions:
 * each `mcpToolCall` item of server `olp` is a call as the exec parser reads it (an open
 * `toolStep`; the turn waits on the call until the bridge answers it, then goes on to its
 * `turn/completed`). A retry takes back only what came after the last call started: codex keeps
 * a started call (see createToolCalls). Shapes: test/fixtures/reference/codex-0.171.0-app-server-*tool-call*.jsonl.
 */
export function createAppServerParser(model?: string): EventParser {
  const reader = createLineReader<Message>();
  let turnId: string | undefined;
  let threadId: string | undefined;
  let total: Record<string, number> | null = null;
  let status: string | undefined;
  let failed: string | undefined;
  let lastError: string | undefined;
  let messages = 0;
  const streamed = new Set<string>();
  const tools = createToolCalls();
  /** What was forwarded since the model was last asked (the turn began, or went on after tools). */
  let attempt = { text: '', events: 0, messages: 0 };

  const ours = (id: string | undefined) => turnId === undefined || id === undefined || id === turnId;

  function text(itemId: string, t: string): BackendEvent[] {
    if (!streamed.has(itemId)) {
      streamed.add(itemId);
      if (messages++ > 0) t = `\n\n${t}`;
    }
    if (!t) return [];
    attempt.text += t;
    attempt.events++;
    return [{ type: 'text', text: t }];
  }

  /** A started call stays (see createToolCalls): what came before it cannot be taken back either. */
  function call(events: BackendEvent[]): BackendEvent[] {
    if (events.length > 0) attempt = { text: '', events: 0, messages };
    return events;
  }

  return {
    get complete() {
      return status !== undefined;
    },
    get toolStep() {
      return tools.step;
    },
    continueAfterTools() {
      tools.next();
      attempt = { text: '', events: 0, messages };
    },
    push(raw: string): BackendEvent[] {
      const msg = reader.read(raw);
      if (!msg) return [];
      // The answer to our turn/start: the turn's id, or why there is no turn.
      if (msg.method === undefined && msg.id !== undefined) {
        if (msg.result?.turn?.id) turnId = msg.result.turn.id;
        else if (msg.error) {
          failed = msg.error.message ?? 'turn/start failed';
          status = 'failed';
        }
        return [];
      }
      const p = msg.params ?? {};
      switch (msg.method) {
        case 'turn/started':
          turnId ??= p.turn?.id;
          if (p.threadId && !threadId) {
            threadId = p.threadId;
            return [{ type: 'session', sessionId: threadId }];
          }
          return [];
        case 'item/agentMessage/delta':
          if (!ours(p.turnId) || typeof p.delta !== 'string') return [];
          return text(p.itemId ?? 'message', p.delta);
        case 'item/started':
          if (
            !ours(p.turnId) ||
            p.item?.type !== 'mcpToolCall' ||
            p.item.server !== 'olp' ||
            typeof p.item.tool !== 'string' ||
            !p.item.id
          )
            return [];
          return call(tools.start(p.item.id, p.item.tool, p.item.arguments));
        case 'item/completed':
          if (!ours(p.turnId) || p.item?.type !== 'agentMessage' || typeof p.item.text !== 'string') return [];
          // Streamed already: the deltas were the text.
          if (streamed.has(p.item.id ?? 'message')) return [];
          return text(p.item.id ?? 'message', p.item.text);
        case 'thread/tokenUsage/updated':
          if (p.turnId !== undefined && turnId !== undefined && p.turnId !== turnId) return [];
          if (p.tokenUsage?.total) total = toRawTotal(p.tokenUsage.total);
          return [];
        case 'account/rateLimits/updated': {
          const report = toCodexPlanReport(p.rateLimits);
          return report ? [{ type: 'plan', report }] : [];
        }
        case 'error': {
          if (!ours(p.turnId)) return [];
          const message = p.error?.message ?? 'error';
          if (p.willRetry) {
            const gone = attempt;
            attempt = { text: '', events: 0, messages: gone.messages };
            messages = gone.messages;
            return [
              ...(gone.events > 0 ? [{ type: 'abandoned' as const, text: gone.text, events: gone.events }] : []),
              { type: 'retry', message },
            ];
          }
          lastError = message;
          return spentReport(message);
        }
        case 'turn/completed':
          if (!ours(p.turn?.id)) return [];
          status = p.turn?.status ?? 'completed';
          if (status !== 'completed') failed = p.turn?.error?.message ?? lastError ?? `turn ${status}`;
          return [];
        default:
          return []; // status changes, warnings, rate-limit updates and future notifications
      }
    },

    finish(exit: ExitInfo): TurnOutcome {
      const usage = toCodexUsage(total);
      const base = threadId ? { sessionId: threadId } : {};
      if (status === 'completed') return { ok: true, stopReason: END_TURN, usage, ...base };
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
