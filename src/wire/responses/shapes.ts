import { randomText } from '../../ids/index.js';
import type { Usage } from '../../backends/index.js';
import type { ConversationResult } from '../../conversation/index.js';
import type { ProxyError } from '../../errors/index.js';
import { toFunctionCallItem, type CallWire, type ResponseToolCallItem } from './calls.js';

export type {
  CallWire,
  ResponseApplyPatchToolCall,
  ResponseCustomToolCall,
  ResponseFunctionShellToolCall,
  ResponseFunctionToolCall,
  ResponseNamespacedCall,
  ResponseToolCallItem,
} from './calls.js';
import type { ToolCall } from '../chat/shapes.js';
import { toIncompleteReason, type IncompleteReason } from './stop-reason.js';

// Responses API wire shapes, named as the openai SDK names them (tests check assignability).

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: [];
}

export interface ResponseOutputMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: ResponseOutputText[];
}

/** The model's thinking, as a summary of one part (sent only when the request asks for a summary). */
export interface ResponseReasoningItem {
  id: string;
  type: 'reasoning';
  summary: { type: 'summary_text'; text: string }[];
}

export type ResponseOutputItem = ResponseReasoningItem | ResponseOutputMessage | ResponseToolCallItem;

export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

export type ResponseToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: { type: 'function'; name: string }[] };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      description?: string;
      strict?: boolean | null;
    };

/** The request's settings a Response echoes back. */
export interface ResponseMeta {
  id: string;
  /** Seconds since the epoch. */
  createdAt: number;
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  maxOutputTokens: number | null;
  metadata: Record<string, string>;
  user?: string | undefined;
  format: TextFormat;
  temperature: number | null;
  topP: number | null;
  truncation: 'auto' | 'disabled';
  parallelToolCalls: boolean;
  /** The request's tools and tool_choice, echoed back. */
  tools: ResponseFunctionTool[];
  /** Tools the model was offered under another name or shape than the client's, by that name. */
  toolWire?: ReadonlyMap<string, CallWire>;
  toolChoice: ResponseToolChoice;
  reasoningEffort: string | null;
  /** The reasoning summary asked for: reasoning items are sent only then. */
  reasoningSummary: 'auto' | 'concise' | 'detailed' | null;
  clientTimeoutMs: number;
  /** Silence after which the stream gets an SSE comment line (0: never). */
  keepaliveMs?: number;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'failed' | 'incomplete';
  error: { code: 'server_error' | 'rate_limit_exceeded'; message: string } | null;
  incomplete_details: { reason: IncompleteReason } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: ResponseOutputItem[];
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: {
    effort: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null;
    summary: 'auto' | 'concise' | 'detailed' | null;
  };
  store: boolean;
  temperature: number | null;
  text: { format: TextFormat };
  tool_choice: ResponseToolChoice;
  tools: ResponseFunctionTool[];
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage?: ResponseUsage;
  user?: string;
}

export function newResponseId(): string {
  return `resp_${randomText(24, 'hex')}`;
}

export function newMessageId(): string {
  return `msg_${randomText(24, 'hex')}`;
}

export function newReasoningId(): string {
  return `rs_${randomText(24, 'hex')}`;
}

/** A reasoning item of the thinking's text (no summary parts while it has none). */
export function toReasoningItem(id: string, text: string): ResponseReasoningItem {
  return { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [] };
}

export function newFunctionCallId(): string {
  return `fc_${randomText(24, 'hex')}`;
}

/** The Responses usage object, with the same cache-aware counts as chat's. */
export function toResponseUsage(u: Usage | null): ResponseUsage {
  return {
    input_tokens: u?.promptTokens ?? 0,
    // Tokens written to the prompt cache: claude's cache_creation_input_tokens, codex's cache_write_input_tokens.
    input_tokens_details: {
      cached_tokens: u?.cachedTokens ?? 0,
      cache_write_tokens: u?.raw.cache_creation_input_tokens ?? u?.raw.cache_write_input_tokens ?? 0,
    },
    output_tokens: u?.completionTokens ?? 0,
    output_tokens_details: { reasoning_tokens: u?.reasoningTokens ?? 0 },
    total_tokens: u?.totalTokens ?? 0,
  };
}

export function toOutputMessage(
  id: string,
  text: string,
  status: ResponseOutputMessage['status'],
): ResponseOutputMessage {
  return { id, type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text, annotations: [] }] };
}

/** A Response object in any state; `output` and `usage` as far as they are known. */
export function toResponse(
  meta: ResponseMeta,
  status: ResponseObject['status'],
  output: ResponseOutputItem[],
  extra: { usage?: Usage | null; error?: ProxyError; model?: string; incomplete?: IncompleteReason | null } = {},
): ResponseObject {
  const effort = meta.reasoningEffort as ResponseObject['reasoning']['effort'];
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    error: extra.error
      ? {
          code: extra.error.type === 'rate_limit_error' ? 'rate_limit_exceeded' : 'server_error',
          message: `${extra.error.message} (${extra.error.code})`,
        }
      : null,
    incomplete_details: extra.incomplete ? { reason: extra.incomplete } : null,
    instructions: meta.instructions,
    max_output_tokens: meta.maxOutputTokens,
    metadata: meta.metadata,
    model: extra.model ?? meta.model,
    output,
    output_text: output.map((m) => (m.type === 'message' ? m.content.map((c) => c.text).join('') : '')).join(''),
    parallel_tool_calls: meta.parallelToolCalls,
    previous_response_id: meta.previousResponseId,
    reasoning: { effort: effort ?? null, summary: meta.reasoningSummary },
    store: meta.store,
    temperature: meta.temperature,
    text: { format: meta.format },
    tool_choice: meta.toolChoice,
    tools: meta.tools,
    top_p: meta.topP,
    truncation: meta.truncation,
    ...(extra.usage !== undefined ? { usage: toResponseUsage(extra.usage) } : {}),
    ...(meta.user !== undefined ? { user: meta.user } : {}),
  };
}

/** The final Response of a finished conversation (what is sent, stored and retrieved). */
export function toFinalResponse(
  meta: ResponseMeta,
  messageId: string,
  text: string,
  r: ConversationResult,
  calls: { itemId: string; call: ToolCall }[] = [],
  reasoning: ResponseReasoningItem[] = [],
): ResponseObject {
  const incomplete = r.error ? null : toIncompleteReason(r.stopReason);
  const status = r.error ? 'failed' : incomplete ? 'incomplete' : 'completed';
  // A reply of function calls alone has no message item.
  const message =
    (r.error && text === '') || (calls.length > 0 && text === '')
      ? []
      : [toOutputMessage(messageId, text, incomplete || r.error ? 'incomplete' : 'completed')];
  const items = calls.map((c) => toFunctionCallItem(c.itemId, c.call, meta.toolWire));
  // The thinking comes before the answer, as the model thought it.
  return toResponse(meta, status, [...reasoning, ...message, ...items], {
    usage: r.usage,
    ...(r.error ? { error: r.error } : {}),
    model: r.servedModel ?? meta.model,
    incomplete,
  });
}
