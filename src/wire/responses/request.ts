import { conversationNotFound, invalidRequest, unsupportedValue } from '../../errors/index.js';
import type { Message as CoreMessage, Part, Role } from '../../core/index.js';
import { checkDepth } from '../depth.js';
import { firstIssue } from '../issues.js';
import {
  customToolCall,
  functionCall,
  functionCallOutput,
  type InputItem,
  type Message,
  message,
  type ResponsesRequest,
  responsesRequestSchema,
} from './schema.js';

export type { InputItem, ResponsesRequest } from './schema.js';
import { qualifiedName } from './tools.js';
import { parseSdkToolItem, SDK_TOOL_ITEMS } from './sdk-tools.js';

export { qualifiedName, toToolOffer, type ResponsesTools, type ToolWire } from './tools.js';

/** A validated Responses request: the fields olp uses, the input as messages and as items. */
export interface ParsedResponsesRequest {
  body: ResponsesRequest;
  items: InputItem[];
  /** The input as the conversation core takes it (without `instructions`). */
  messages: CoreMessage[];
}

function textOf(parts: readonly { type: string; text?: string; refusal?: string }[]): string {
  return parts.map((p) => p.text ?? p.refusal ?? '').join('');
}

/** A message's speaker in the core's words: `developer` text is system text. */
function roleOf(role: Message['role']): Role {
  return role === 'developer' ? 'system' : role;
}

/** A Responses input message as the core's message (images keep their path), and as a stored item. */
function toMessage(m: Message, at: string): { item: InputItem; message: CoreMessage } {
  const role = roleOf(m.role);
  if (typeof m.content === 'string') {
    const item: InputItem = {
      type: 'message',
      role: m.role,
      content: [
        m.role === 'assistant'
          ? { type: 'output_text', text: m.content, annotations: [] }
          : { type: 'input_text', text: m.content },
      ],
    };
    return { item, message: { role, parts: [{ type: 'text', text: m.content }] } };
  }
  if (m.role !== 'user') {
    const text = textOf(m.content);
    const content =
      m.role === 'assistant'
        ? { type: 'output_text' as const, text, annotations: [] as [] }
        : { type: 'input_text' as const, text };
    return {
      item: { type: 'message', role: m.role, content: [content] },
      message: { role, parts: [{ type: 'text', text }] },
    };
  }
  const parts: Part[] = [];
  const content: Extract<InputItem, { type: 'message' }>['content'] = [];
  m.content.forEach((part, i) => {
    if (part.type === 'input_text') {
      parts.push({ type: 'text', text: part.text });
      content.push(part);
    } else if (part.type === 'input_image') {
      if (!part.image_url)
        throw invalidRequest(
          `Invalid value for '${at}.content.${i}': olp takes images as data URLs in 'image_url'; file_id images ` +
            `are not supported.`,
          `${at}.content.${i}`,
          'unsupported_content',
        );
      parts.push({ type: 'image', url: part.image_url, at: `${at}.content.${i}` });
      content.push({ type: 'input_image', image_url: part.image_url, detail: part.detail ?? 'auto' });
    } else {
      throw invalidRequest(
        `Invalid value for '${at}.content.${i}': neither CLI takes file inputs; send the text of the file instead.`,
        `${at}.content.${i}`,
        'unsupported_content',
      );
    }
  });
  return { item: { type: 'message', role: 'user', content }, message: { role: 'user', parts } };
}

/**
 * Input items a client sends back that carry nothing a CLI can take: another provider's
 * reasoning (encrypted for it) and compaction summaries, and the calls of hosted tools olp does
 * not run (their results were never the model's here). They are left out of the conversation.
 */
const DROPPED_ITEMS: ReadonlySet<string> = new Set([
  'reasoning',
  'compaction',
  'web_search_call',
  'file_search_call',
  'tool_search_call',
  'tool_search_output',
  'image_generation_call',
  'code_interpreter_call',
  'computer_call',
  'computer_call_output',
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
  'mcp_approval_response',
  'local_shell_call',
  'local_shell_call_output',
  'compaction_trigger',
]);

/** A call of the model's, added to the assistant message it belongs to: calls in a row (or after its text) are one. */
function addCall(messages: CoreMessage[], id: string, name: string, args: string): void {
  const call: Part = { type: 'tool_call', id, name, arguments: args };
  const last = messages.at(-1);
  if (last?.role === 'assistant') last.parts.push(call);
  else messages.push({ role: 'assistant', parts: [call] });
}

/** The client's result of one call, as the user message that carries it. */
function resultMessage(callId: string, content: string): CoreMessage {
  return { role: 'user', parts: [{ type: 'tool_result', callId, content }] };
}

/**
 * Fields that would change what the request means, which olp does not serve: refused by name
 * rather than ignored (a reply that silently ignored them would be another request's).
 */
function checkUnserved(body: Record<string, unknown>): void {
  const conversation = body.conversation as string | { id?: unknown } | null | undefined;
  if (conversation !== undefined && conversation !== null)
    throw conversationNotFound(
      typeof conversation === 'string' ? conversation : String((conversation as { id?: unknown }).id ?? ''),
    );
  if (body.prompt !== undefined && body.prompt !== null)
    throw unsupportedValue(
      'prompt',
      "Invalid value for 'prompt': olp keeps no reusable prompts; send the prompt's text as 'instructions' and " +
        "'input'.",
    );
  if (body.background === true)
    throw unsupportedValue(
      'background',
      "Invalid value for 'background': olp does not run responses in the background; send the request without " +
        'it (with stream: true for long replies).',
    );
}

/** Validates a `POST /v1/responses` body or throws a 400 whose `param` names the offending field. */
export function parseResponsesRequest(raw: unknown): ParsedResponsesRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest('The request body must be a JSON object with `model` and `input`.', null);
  checkDepth(raw);
  checkUnserved(raw as Record<string, unknown>);
  const r = responsesRequestSchema.safeParse(raw, { reportInput: true });
  if (!r.success) throw invalidRequest(...firstIssue(r.error));
  const body = r.data;
  const list: unknown[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const items: InputItem[] = [];
  const messages: CoreMessage[] = [];
  list.forEach((entry, i) => {
    const at = typeof body.input === 'string' ? 'input' : `input.${i}`;
    const type = (entry as { type?: unknown } | null)?.type;
    if (type === 'function_call') {
      const f = functionCall.safeParse(entry, { reportInput: true });
      if (!f.success) throw invalidRequest(...firstIssue(f.error, at));
      const { call_id, name, arguments: args, namespace } = f.data;
      items.push({ type: 'function_call', call_id, name, arguments: args, ...(namespace ? { namespace } : {}) });
      addCall(messages, call_id, namespace ? qualifiedName(namespace, name) : name, args);
      return;
    }
    if (type === 'custom_tool_call') {
      const f = customToolCall.safeParse(entry, { reportInput: true });
      if (!f.success) throw invalidRequest(...firstIssue(f.error, at));
      const { call_id, name, input, namespace } = f.data;
      items.push({ type: 'custom_tool_call', call_id, name, input, ...(namespace ? { namespace } : {}) });
      // The model was offered it as a function of one string (see toToolOffer).
      addCall(messages, call_id, namespace ? qualifiedName(namespace, name) : name, JSON.stringify({ input }));
      return;
    }
    if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const f = functionCallOutput.safeParse(entry, { reportInput: true });
      if (!f.success) throw invalidRequest(...firstIssue(f.error, at));
      const output =
        typeof f.data.output === 'string' ? f.data.output : f.data.output.map((p) => p.text ?? '').join('');
      items.push({ type: f.data.type, call_id: f.data.call_id, output });
      messages.push(resultMessage(f.data.call_id, output));
      return;
    }
    if (typeof type === 'string' && SDK_TOOL_ITEMS.has(type)) {
      const { item, call, result } = parseSdkToolItem(entry, at);
      items.push(item);
      if (call) addCall(messages, call.id, call.name, call.args);
      else messages.push(resultMessage(item.call_id, result ?? ''));
      return;
    }
    // Items of another provider's making or of tools olp does not run: nothing the CLI can use.
    if (typeof type === 'string' && DROPPED_ITEMS.has(type)) return;
    if (type !== undefined && type !== 'message') {
      throw unsupportedValue(
        `${at}.type`,
        `Invalid value for '${at}.type': olp takes input items of type 'message', 'function_call', ` +
          `'function_call_output', 'custom_tool_call', 'custom_tool_call_output', ${quoted(SDK_TOOL_ITEMS)} ` +
          `and 'item_reference', and leaves out ${quoted(DROPPED_ITEMS)} (got '${String(type).slice(0, 40)}').`,
      );
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
  if (!messages.some((m) => m.role !== 'system')) {
    throw invalidRequest(
      "'input' must contain at least one user message, not only system or developer messages.",
      'input',
    );
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
    if (item.type === 'message') return;
    if (item.type.endsWith('_call')) calls.add(item.call_id);
    else if (item.type.endsWith('_call_output') && !calls.has(item.call_id)) {
      throw invalidRequest(
        `No tool call found for function call output with call_id '${item.call_id.slice(0, 80)}': a ` +
          `'function_call_output' must answer a 'function_call' earlier in 'input' or in the conversation ` +
          "'previous_response_id' continues.",
        `input.${i}.call_id`,
      );
    }
  });
}

/** Each name in quotes, joined by commas (for an error's list of what is taken). */
function quoted(names: Iterable<string>): string {
  return [...names].map((t) => `'${t}'`).join(', ');
}
