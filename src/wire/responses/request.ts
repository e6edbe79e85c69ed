import { conversationNotFound, invalidRequest, unsupportedValue } from '../../errors/index.js';
import type { Message as CoreMessage } from '../../core/index.js';
import { checkDepth } from '../depth.js';
import { firstIssue } from '../../errors/index.js';
import {
  customToolCall,
  functionCall,
  functionCallOutput,
  type InputItem,
  message,
  type ResponsesRequest,
  responsesRequestSchema,
} from './schema.js';

export type { InputItem, ResponsesRequest } from './schema.js';
import { addCall, toMessage } from './input-message.js';
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
