import { z } from 'zod';
import { invalidRequest, unsupportedValue } from '../errors/index.js';
import type { ChatMessage } from './chat-request.js';
import { checkDepth } from './depth.js';
import { firstIssue } from './issues.js';

// Unknown top-level keys are stripped, not rejected (SDKs add their own); the README lists what is used.

const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1, 'expected a data URL (file_id images are not supported)').optional(),
  file_id: z.string().optional(),
  detail: z.enum(['auto', 'low', 'high', 'original']).optional(),
});
const inputFile = z.object({ type: z.literal('input_file') }).loose();
const outputText = z.object({ type: z.literal('output_text'), text: z.string() }).loose();
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() });

const inputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile], { error: "expected a content part of type 'input_text', 'input_image' or 'input_file'" });
const assistantPart = z.discriminatedUnion('type', [outputText, refusal, inputText], { error: "expected a content part of type 'output_text' or 'refusal'" });

const message = z.discriminatedUnion('role', [
  z.object({ type: z.literal('message').optional(), role: z.enum(['user']), content: z.union([z.string(), z.array(inputPart)], { error: 'expected a string or an array of content parts' }) }),
  z.object({ type: z.literal('message').optional(), role: z.enum(['system', 'developer']), content: z.union([z.string(), z.array(inputText)], { error: "expected a string or an array of 'input_text' parts" }) }),
  z.object({ type: z.literal('message').optional(), role: z.literal('assistant'), id: z.string().optional(), status: z.string().optional(), content: z.union([z.string(), z.array(assistantPart)], { error: 'expected a string or an array of content parts' }) }),
], { error: "expected an input item of type 'message' with a role of user, system, developer or assistant" });

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1-64 letters, digits, _ or -'), schema: z.record(z.string(), z.unknown()), description: z.string().optional(), strict: z.boolean().nullable().optional() }),
]);

const responsesRequestSchema = z.object({
  model: z.string({ error: 'you must provide a model parameter (a string)' }).min(1, 'model must not be empty'),
  input: z.union([z.string().min(1, 'input must not be empty'), z.array(z.unknown()).min(1, "'input' must contain at least one item")], { error: 'expected a string or an array of input items' }),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  previous_response_id: z.string().min(1).nullable().optional(),
  store: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().min(16).nullable().optional(),
  text: z.object({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() }).nullable().optional(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
  user: z.string().optional(),
  reasoning: z.object({ effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(), summary: z.string().nullable().optional() }).loose().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  tools: z.array(z.unknown()).optional(),
  tool_choice: z.unknown().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
type Message = z.infer<typeof message>;

/** One input item as stored and listed by `input_items`: OpenAI's shapes. */
export type InputItem =
  | {
      type: 'message';
      role: 'user' | 'system' | 'developer' | 'assistant';
      content: ({ type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: string } | { type: 'output_text'; text: string; annotations: [] })[];
    }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

const functionCall = z.object({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string(), id: z.string().optional(), status: z.string().optional() }).loose();
const functionCallOutput = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).loose())], { error: 'expected a string or an array of content parts' }),
  id: z.string().optional(),
  status: z.string().optional(),
});

/** A validated Responses request: the fields olp uses, the input as messages and as items. */
export interface ParsedResponsesRequest {
  body: ResponsesRequest;
  items: InputItem[];
  /** The input as the conversation core takes it (without `instructions`). */
  messages: ChatMessage[];
}

function textOf(parts: readonly { type: string; text?: string; refusal?: string }[]): string {
  return parts.map((p) => p.text ?? p.refusal ?? '').join('');
}

/** A Responses input item as a chat message (images as data-URL parts), and as a stored item. */
function toMessage(m: Message, at: string): { item: InputItem; message: ChatMessage } {
  if (typeof m.content === 'string') {
    const item: InputItem = { type: 'message', role: m.role, content: [m.role === 'assistant' ? { type: 'output_text', text: m.content, annotations: [] } : { type: 'input_text', text: m.content }] };
    return { item, message: { role: m.role, content: m.content } as ChatMessage };
  }
  if (m.role === 'assistant') {
    const text = textOf(m.content);
    return { item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }, message: { role: 'assistant', content: text } };
  }
  if (m.role !== 'user') {
    const text = textOf(m.content);
    return { item: { type: 'message', role: m.role, content: [{ type: 'input_text', text }] }, message: { role: m.role, content: text } as ChatMessage };
  }
  const parts: Extract<ChatMessage, { role: 'user' }>['content'] = [];
  const content: Extract<InputItem, { type: 'message' }>['content'] = [];
  m.content.forEach((part, i) => {
    if (part.type === 'input_text') {
      parts.push({ type: 'text', text: part.text });
      content.push(part);
    } else if (part.type === 'input_image') {
      if (!part.image_url) throw invalidRequest(`Invalid value for '${at}.content.${i}': olp takes images as data URLs in 'image_url'; file_id images are not supported.`, `${at}.content.${i}`, 'unsupported_content');
      parts.push({ type: 'image_url', image_url: { url: part.image_url } });
      content.push({ type: 'input_image', image_url: part.image_url, detail: part.detail ?? 'auto' });
    } else {
      throw invalidRequest(`Invalid value for '${at}.content.${i}': neither CLI takes file inputs; send the text of the file instead.`, `${at}.content.${i}`, 'unsupported_content');
    }
  });
  return { item: { type: 'message', role: 'user', content }, message: { role: 'user', content: parts } };
}

/** Validates a `POST /v1/responses` body or throws a 400 whose `param` names the offending field. */
export function parseResponsesRequest(raw: unknown): ParsedResponsesRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalidRequest('The request body must be a JSON object with `model` and `input`.', null);
  checkDepth(raw);
  const r = responsesRequestSchema.safeParse(raw, { reportInput: true });
  if (!r.success) throw invalidRequest(...firstIssue(r.error));
  const body = r.data;
  const list: unknown[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const items: InputItem[] = [];
  const messages: ChatMessage[] = [];
  list.forEach((entry, i) => {
    const at = typeof body.input === 'string' ? 'input' : `input.${i}`;
    const type = (entry as { type?: unknown } | null)?.type;
    if (type === 'function_call') {
      const f = functionCall.safeParse(entry, { reportInput: true });
      if (!f.success) throw invalidRequest(...firstIssue(f.error, at));
      items.push({ type: 'function_call', call_id: f.data.call_id, name: f.data.name, arguments: f.data.arguments });
      // Calls in a row (or after the assistant's text) are one assistant message with tool calls.
      const call = { id: f.data.call_id, type: 'function' as const, function: { name: f.data.name, arguments: f.data.arguments } };
      const last = messages.at(-1);
      if (last?.role === 'assistant') (last as { tool_calls?: unknown[] }).tool_calls = [...((last as { tool_calls?: unknown[] }).tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] } as ChatMessage);
      return;
    }
    if (type === 'function_call_output') {
      const f = functionCallOutput.safeParse(entry, { reportInput: true });
      if (!f.success) throw invalidRequest(...firstIssue(f.error, at));
      const output = typeof f.data.output === 'string' ? f.data.output : f.data.output.map((p) => p.text ?? '').join('');
      items.push({ type: 'function_call_output', call_id: f.data.call_id, output });
      messages.push({ role: 'tool', tool_call_id: f.data.call_id, content: output });
      return;
    }
    if (type !== undefined && type !== 'message') {
      throw unsupportedValue(`${at}.type`, `Invalid value for '${at}.type': olp takes input items of type 'message', 'function_call', 'function_call_output' and 'item_reference' (got '${String(type).slice(0, 40)}').`);
    }
    const m = message.safeParse(entry, { reportInput: true });
    if (!m.success) {
      const [text, param] = firstIssue(m.error, at);
      throw invalidRequest(text, param);
    }
    const { item, message: msg } = toMessage(m.data, at);
    items.push(item);
    messages.push(msg);
  });
  if (!messages.some((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'tool')) {
    throw invalidRequest("'input' must contain at least one user message, not only system or developer messages.", 'input');
  }
  return { body, items, messages };
}

/**
 * Every `function_call_output` must answer a function call made before it: by a `function_call`
 * item earlier in the input, or by the conversation `previous_response_id` continues (`earlier`,
 * its call ids). An output answering nothing is a 400, as chat's orphan `tool` message.
 */
export function checkCallOutputs(items: readonly InputItem[], earlier: ReadonlySet<string>): void {
  const calls = new Set(earlier);
  items.forEach((item, i) => {
    if (item.type === 'function_call') calls.add(item.call_id);
    else if (item.type === 'function_call_output' && !calls.has(item.call_id)) {
      throw invalidRequest(
        `No tool call found for function call output with call_id '${item.call_id.slice(0, 80)}': a 'function_call_output' must answer a 'function_call' earlier in 'input' or in the conversation 'previous_response_id' continues.`,
        `input.${i}.call_id`,
      );
    }
  });
}

/**
 * The request's function tools in the chat shape `parseToolRequest` reads: Responses tools are
 * flat (`{type, name, description, parameters}`), its named tool_choice `{type, name}`.
 */
export function toChatTools(body: ResponsesRequest): { tools?: unknown; tool_choice?: unknown; parallel_tool_calls?: unknown } {
  const tools = body.tools?.map((t, i) => {
    const tool = t as { type?: unknown; name?: unknown; description?: unknown; parameters?: unknown };
    if (tool?.type !== 'function') throw unsupportedValue(`tools.${i}.type`, `Invalid value for 'tools.${i}.type': olp serves function tools only (got '${String(tool?.type).slice(0, 40)}').`);
    return { type: 'function', function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}) } };
  });
  const toolChoice = toChatToolChoice(body.tool_choice);
  return { ...(tools ? { tools } : {}), ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}), ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}) };
}

const CHOICES = `'none', 'auto', 'required', {"type": "function", "name": …} or {"type": "allowed_tools", "mode": "auto" | "required", "tools": [{"type": "function", "name": …}, …]}`;

/**
 * A Responses `tool_choice` in the chat shape the tools module reads, checked in the Responses
 * shape (so a 400 quotes what this endpoint takes): a named function is `{type, name}`, allowed
 * tools `{type: "allowed_tools", mode, tools: [{type: "function", name}]}`.
 */
function toChatToolChoice(raw: unknown): unknown {
  if (raw === undefined || raw === null || raw === 'none' || raw === 'auto' || raw === 'required') return raw;
  const choice = raw as { type?: unknown; name?: unknown; mode?: unknown; tools?: unknown };
  if (choice && typeof choice === 'object' && choice.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  if (choice && typeof choice === 'object' && choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required') throw invalidRequest("Invalid value for 'tool_choice.mode': expected 'auto' or 'required'.", 'tool_choice.mode');
    if (!Array.isArray(choice.tools) || choice.tools.length === 0) throw invalidRequest("Invalid value for 'tool_choice.tools': expected a non-empty array of tools.", 'tool_choice.tools');
    const tools = (choice.tools as unknown[]).map((entry, i) => {
      const tool = entry as { type?: unknown; name?: unknown } | null;
      if (tool?.type !== 'function') throw unsupportedValue(`tool_choice.tools.${i}.type`, `Invalid value for 'tool_choice.tools.${i}.type': olp serves function tools only (got '${String(tool?.type).slice(0, 40)}').`);
      if (typeof tool.name !== 'string') throw invalidRequest(`Missing required parameter: 'tool_choice.tools.${i}.name'.`, `tool_choice.tools.${i}.name`);
      return { type: 'function', function: { name: tool.name } };
    });
    return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools } };
  }
  throw invalidRequest(`Invalid value for 'tool_choice': expected ${CHOICES}.`, 'tool_choice');
}
