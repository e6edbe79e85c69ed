import type { PlanReport } from '../../plan/index.js';
import { END_TURN, type StopReason } from '../../core/index.js';
import type { BackendEvent, ToolStep, Usage } from '../types.js';
import { toUsage } from './usage.js';

// The shapes of claude's stream-json lines and the pure readings of their fields.

/** One line of claude's stream-json output, as far as olp reads it. */
export interface Line {
  type?: string;
  subtype?: string;
  session_id?: string;
  tools?: unknown;
  model?: string;
  parent_tool_use_id?: string | null;
  event?: {
    type?: string;
    index?: number;
    message?: { id?: string; usage?: Record<string, unknown> };
    content_block?: { type?: string; id?: string; name?: string };
    delta?: {
      type?: string;
      text?: string;
      partial_json?: string;
      thinking?: string;
      signature?: string;
      stop_reason?: string | null;
    };
    usage?: { output_tokens?: number };
  };
  message?: {
    id?: string;
    model?: string;
    content?: {
      type?: string;
      text?: string;
      id?: string;
      name?: string;
      input?: unknown;
      thinking?: string;
      signature?: string;
    }[];
  };
  error?: string;
  usage?: unknown;
  total_cost_usd?: unknown;
}

interface RateLimitInfo {
  status?: unknown;
  resetsAt?: unknown;
  rateLimitType?: unknown;
  isUsingOverage?: unknown;
  overageStatus?: unknown;
  utilization?: unknown;
  unifiedWindows?: Record<string, { utilization?: unknown; resetsAt?: unknown; status?: unknown }>;
}

/** A `rate_limit_event`'s rate_limit_info as a plan report; undefined when it is not one. */
export function toPlanReport(raw: unknown): PlanReport | undefined {
  const info = raw as RateLimitInfo | undefined;
  if (!info || (info.status !== 'allowed' && info.status !== 'allowed_warning' && info.status !== 'rejected'))
    return undefined;
  const window = typeof info.rateLimitType === 'string' ? info.rateLimitType : null;
  const unified = window ? info.unifiedWindows?.[window] : undefined;
  const utilization = [unified?.utilization, info.utilization].find(
    (u): u is number => typeof u === 'number' && u >= 0 && u <= 10,
  );
  const status = unified?.status === 'allowed_warning' && info.status === 'allowed' ? 'allowed_warning' : info.status;
  return {
    status,
    window,
    resetsAt: typeof info.resetsAt === 'number' && info.resetsAt > 0 ? info.resetsAt * 1000 : null,
    utilization: utilization ?? null,
    // `rejected` with extra usage allowed: the included usage is spent and turns draw on overage.
    overage:
      info.isUsingOverage === true ||
      (info.status === 'rejected' && (info.overageStatus === 'allowed' || info.overageStatus === 'allowed_warning')),
  };
}

/**
 * Line types olp reads nothing from on purpose (the reference's "also possible" list, and the
 * control protocol's lines on a live process); any other type is a newer CLI's, noted.
 */
export const KNOWN_IGNORED = new Set([
  'user',
  'control_response',
  'control_request',
  'control_cancel_request',
  'keep_alive',
  'tool_progress',
  'auth_status',
  'prompt_suggestion',
  'tool_use_summary',
  'streamlined_text',
  'streamlined_tool_use_summary',
]);
/**
 * `system` subtypes olp knows (and mostly ignores). `thinking_tokens` (2.1.197, 2.1.332) is the
 * running estimate of a thinking block's tokens while it streams: the block itself comes as
 * stream events and its `assistant` line.
 */
export const KNOWN_SYSTEM = new RegExp(
  '^(init|api_retry|status|compact_boundary|permission_denied|hook_\\w+|task_\\w+|local_command_output|' +
    'informational|files_persisted|elicitation_complete|notification|thinking_tokens)$',
);

/** The tool claude offers the model for structured output (2.1.197). */
export const STRUCTURED_TOOL = 'StructuredOutput';

/** `attempt 3/10: HTTP 529 overloaded_error` from an `api_retry` line. */
export function toRetryMessage(line: Line): string {
  const r = line as Line & { attempt?: unknown; max_retries?: unknown; error_status?: unknown };
  const status = typeof r.error_status === 'number' ? `HTTP ${r.error_status} ` : '';
  const error = typeof r.error === 'string' ? r.error : 'error';
  return `attempt ${String(r.attempt ?? '?')}/${String(r.max_retries ?? '?')}: ${status}${error}`;
}

/**
 * Anthropic's stop reason, as claude reports it, in olp's words. claude is never given stop
 * sequences (olp serves them itself), so its `stop_sequence` is an ordinary end.
 */
export function toStopReason(stop: string | null | undefined): StopReason {
  switch (stop) {
    case 'max_tokens':
      return { type: 'output_cap' };
    case 'model_context_window_exceeded':
      return { type: 'context_window' };
    case 'refusal':
      return { type: 'refusal' };
    case 'pause_turn':
      return { type: 'interrupted' };
    default:
      return END_TURN;
  }
}

/** The four raw counts of an Anthropic usage object. */
export function rawCounts(u: Record<string, unknown> | undefined): Record<string, number> | undefined {
  if (!u) return undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  return {
    input_tokens: n(u.input_tokens),
    cache_creation_input_tokens: n(u.cache_creation_input_tokens),
    cache_read_input_tokens: n(u.cache_read_input_tokens),
    output_tokens: n(u.output_tokens),
  };
}

/** A turn's usage without what its tool steps already reported (each model call counted once). */
export function withoutReported(usage: Usage | null, reported: Record<string, number>): Usage | null {
  if (!usage || Object.keys(reported).length === 0) return usage;
  const raw = Object.fromEntries(Object.entries(usage.raw).map(([k, v]) => [k, Math.max(0, v - (reported[k] ?? 0))]));
  return toUsage(raw, usage.costUsd);
}

/**
 * The tool step a message ends with: its calls, and its usage, added to what the turn's tool
 * steps have reported (so each model call is counted once).
 */
export function toToolStep(
  calls: readonly { id: string; name: string; arguments: string }[],
  messageUsage: Record<string, number> | undefined,
  reported: Record<string, number>,
): { step: ToolStep; events: BackendEvent[] } {
  const usage = messageUsage ? toUsage(messageUsage) : null;
  for (const [k, v] of Object.entries(usage?.raw ?? {})) reported[k] = (reported[k] ?? 0) + v;
  const step = { calls: calls.map((c) => ({ ...c, arguments: c.arguments || '{}' })), usage };
  // A call whose arguments never streamed (a function without parameters) still gets a
  // JSON object, as OpenAI's do.
  const events = calls.flatMap((c, index) =>
    c.arguments === '' ? [{ type: 'tool_args' as const, index, text: '{}' }] : [],
  );
  return { step, events };
}

/** A `stream_event` line's event. */
export type StreamEvent = NonNullable<Line['event']>;

/** A content block of an `assistant` line's whole message. */
export type Content = NonNullable<NonNullable<Line['message']>['content']>[number];

/** The thinking event of a whole message's non-empty `thinking` block; undefined for any other block. */
export function thinkingOf(c: Content): BackendEvent | undefined {
  if (c.type !== 'thinking' || typeof c.thinking !== 'string' || c.thinking === '') return undefined;
  return {
    type: 'thinking',
    text: c.thinking,
    ...(typeof c.signature === 'string' && c.signature !== '' ? { signature: c.signature } : {}),
  };
}

/** The text of a non-empty `text_delta`; undefined for any other event. */
export function textDeltaOf(ev: StreamEvent): string | undefined {
  const d = ev.type === 'content_block_delta' && ev.delta?.type === 'text_delta' ? ev.delta.text : undefined;
  return typeof d === 'string' && d !== '' ? d : undefined;
}

/** The thinking event of a non-empty `thinking_delta` or `signature_delta`; undefined for any other event. */
export function thinkingDeltaOf(ev: StreamEvent): BackendEvent | undefined {
  if (ev.type !== 'content_block_delta') return undefined;
  const d = ev.delta;
  if (d?.type === 'thinking_delta' && typeof d.thinking === 'string' && d.thinking !== '')
    return { type: 'thinking', text: d.thinking };
  if (d?.type === 'signature_delta' && typeof d.signature === 'string' && d.signature !== '')
    return { type: 'thinking', text: '', signature: d.signature };
  return undefined;
}

/** The JSON of a non-empty `input_json_delta` (a tool call's arguments); undefined for any other event. */
export function jsonDeltaOf(ev: StreamEvent): string | undefined {
  const d =
    ev.type === 'content_block_delta' && ev.delta?.type === 'input_json_delta' ? ev.delta.partial_json : undefined;
  return typeof d === 'string' && d !== '' ? d : undefined;
}

/** The `tool_use` block a `content_block_start` opens; undefined for any other event. */
export function toolStartOf(ev: StreamEvent): { id?: string; name?: string } | undefined {
  return ev.type === 'content_block_start' && ev.content_block?.type === 'tool_use' ? ev.content_block : undefined;
}
