import type { StopReason, Usage } from '../../backends/index.js';
import { toAnthropicStop, type AnthropicStopReason } from './stop-reason.js';

// Anthropic Messages wire shapes, named after the @anthropic-ai/sdk types they mirror (`Message`,
// `Usage`, `ContentBlock`, `StopReason`), prefixed so they do not read as olp's own messages. The
// SDK's types add nullable fields (container, stop_details, citations, caller, service_tier) that
// the API leaves out of the streams Claude Code reads; olp sends what those streams carry. A
// Message's id comes from `newMessageId` (response-shapes.ts: `msg_` and random hex), shared with
// the Responses API's message items.

/** Anthropic's `Usage`: `input_tokens` excludes the cache reads and writes, which have fields of their own. */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

type AnthropicContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

/** Anthropic's `Message`: the whole reply of a non-streamed request, and (empty) `message_start`'s. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** A call of one of the client's tools as the core made it: its id, name and JSON arguments. */
interface MessagesToolCall {
  id: string;
  name: string;
  arguments: string;
}

// Anthropic's pattern for a tool_use id, which a client sends back as tool_result.tool_use_id.
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const ENCODED = 'toolu_olp_';

/**
 * A core tool call id as a tool_use id. The ids the CLIs give already fit Anthropic's pattern
 * (claude's are Anthropic's own `toolu_…`, codex's olp's `call_` and base64url) and go out as
 * they are, so a parked turn finds its calls by the ids the client sends back; any other is
 * carried reversibly, base64url-encoded under `toolu_olp_` (`fromAnthropicToolId` reads it back).
 */
export function toAnthropicToolId(id: string): string {
  return TOOL_ID.test(id) && !id.startsWith(ENCODED)
    ? id
    : `${ENCODED}${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** The core's call id for a tool_use id olp sent (the inverse of `toAnthropicToolId`; other ids as they are). */
export function fromAnthropicToolId(id: string): string {
  return id.startsWith(ENCODED) ? Buffer.from(id.slice(ENCODED.length), 'base64url').toString('utf8') : id;
}

/**
 * Anthropic's usage from the core's. The core's `promptTokens` is the whole prompt, cached part
 * included, for both CLIs (claude: input + cache creation + cache read; codex: its input_tokens,
 * which include the cached ones), and `cachedTokens` the cache read. Anthropic counts the three
 * apart, so input_tokens is the prompt less the cache read and the cache write, the write read from
 * the raw counts: claude's `cache_creation_input_tokens`, codex's `cache_write_input_tokens`.
 */
export function toAnthropicUsage(u: Usage | null): AnthropicUsage {
  if (!u) return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  const read = u.cachedTokens;
  const write = u.raw.cache_creation_input_tokens ?? u.raw.cache_write_input_tokens ?? 0;
  return {
    input_tokens: Math.max(0, u.promptTokens - read - write),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: u.completionTokens,
  };
}

/**
 * A call's arguments as tool_use.input, which is always an object. Arguments that are not a JSON
 * object (a CLI cut off mid-call) are kept whole under `_raw` rather than lost.
 */
function toToolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through: kept as text
  }
  return { _raw: args };
}

/**
 * The whole Message of a non-streamed reply: its thinking, its text, then its tool calls. An empty
 * reply has no blocks (`content: []`, as Anthropic sends it): an empty text block is refused when
 * sent back. A thinking block the CLI gave no signature for has an empty one (the field is required).
 */
export function toAnthropicMessage(
  meta: { id: string; model: string },
  text: string,
  calls: readonly MessagesToolCall[],
  stop: StopReason,
  usage: Usage | null,
  thinking: readonly { thinking: string; signature?: string }[] = [],
): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  for (const t of thinking) content.push({ type: 'thinking', thinking: t.thinking, signature: t.signature ?? '' });
  if (text) content.push({ type: 'text', text });
  for (const c of calls)
    content.push({ type: 'tool_use', id: toAnthropicToolId(c.id), name: c.name, input: toToolInput(c.arguments) });
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content,
    ...toAnthropicStop(stop, calls.length > 0),
    usage: toAnthropicUsage(usage),
  };
}
