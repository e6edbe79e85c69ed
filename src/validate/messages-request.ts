import { invalidRequest } from '../errors/index.js';
import type { ChatMessage } from './chat-request.js';
import { checkDepth } from './depth.js';
import { firstIssue } from './issues.js';
import {
  DROPPED_BLOCKS,
  messagesRequestSchema,
  type AnthropicMessage,
  type Block,
  type MessagesRequest,
} from './messages-schema.js';

export type { MessagesRequest } from './messages-schema.js';

/** A validated Messages request as the conversation core takes it (the chat shape), and what was left out. */
export interface ParsedMessagesRequest {
  body: MessagesRequest;
  messages: ChatMessage[];
  /** The tools and tool choice in the chat shape `parseToolRequest` reads. */
  chatTools: { tools?: unknown; tool_choice?: unknown; parallel_tool_calls?: unknown };
  responseFormat?: { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown> } };
  /** Tool types (and `mcp_servers`) the model is not offered, as olp cannot run them, and tools named past olp's rule. */
  dropped: string[];
}

type UserPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file'; file: { file_data: string } };
type ImageBlock = Extract<Block, { type: 'image' }>;

const DROPPED: ReadonlySet<string> = new Set(DROPPED_BLOCKS);

/** The tool names olp offers: OpenAI's rule, as src/tools keeps it (validate cannot import tools: tools → transcript → validate). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** An image block as the data URL (or remote URL) part the core takes. */
function toImagePart(b: ImageBlock, at: string): UserPart {
  const s = b.source;
  if (s.type === 'base64') return { type: 'image_url', image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  if (s.type === 'url') return { type: 'image_url', image_url: { url: s.url } };
  throw invalidRequest(
    `Invalid value for '${at}.source': olp takes images as base64 or URL sources; Files API images ('file') are not supported.`,
    `${at}.source`,
    'unsupported_content',
  );
}

/**
 * A `document` block as the core takes it: plain text (a `text` or `content` source, or base64
 * `text/plain`) as text; a base64 PDF as the chat `file` part of a data URL (the transcript checks
 * it, and only the claude CLI is given it); any other source is refused naming the block.
 */
function toDocumentPart(b: Extract<Block, { type: 'document' }>, at: string): UserPart {
  const s = b.source as { type: string; media_type?: unknown; data?: unknown; content?: unknown };
  if (s.type === 'text' && typeof s.data === 'string') return { type: 'text', text: s.data };
  if (s.type === 'content' && Array.isArray(s.content))
    return {
      type: 'text',
      text: s.content.map((c: { text?: unknown }) => (typeof c?.text === 'string' ? c.text : '')).join('\n'),
    };
  if (s.type === 'base64' && typeof s.data === 'string') {
    if (s.media_type === 'text/plain') return { type: 'text', text: Buffer.from(s.data, 'base64').toString('utf8') };
    if (s.media_type === 'application/pdf')
      return { type: 'file', file: { file_data: `data:application/pdf;base64,${s.data}` } };
  }
  throw invalidRequest(
    `Invalid content block '${at}': 'document' blocks of source type '${String(s.type).slice(0, 40)}'${typeof s.media_type === 'string' ? ` (${s.media_type.slice(0, 60)})` : ''} are not supported; olp takes a base64 PDF, or plain text.`,
    at,
    'unsupported_content',
  );
}

/**
 * One user message: its `tool_result` blocks become `tool` messages first, in order (images a
 * result carries go with the user's content after them, since a tool message holds text only),
 * then its other blocks one user message.
 */
function fromUser(m: AnthropicMessage, at: string): ChatMessage[] {
  if (typeof m.content === 'string') return [{ role: 'user', content: m.content }];
  const tools: ChatMessage[] = [];
  const parts: UserPart[] = [];
  m.content.forEach((b, j) => {
    const here = `${at}.content.${j}`;
    if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image') parts.push(toImagePart(b, here));
    else if (b.type === 'document') parts.push(toDocumentPart(b, here));
    else if (b.type === 'tool_result') {
      const blocks = typeof b.content === 'string' ? [{ type: 'text' as const, text: b.content }] : (b.content ?? []);
      const text = blocks
        .flatMap((c) =>
          c.type === 'text' ? [c.text] : c.type === 'tool_reference' ? [`(tool ${c.tool_name} is available)`] : [],
        )
        .join('\n');
      // A tool message has no error flag: the model reads it in the result's text.
      tools.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error ? `Error: ${text}` : text });
      blocks.forEach((c, k) => {
        if (c.type !== 'image') return;
        parts.push({ type: 'text', text: `(an image returned by tool call ${b.tool_use_id})` });
        parts.push(toImagePart(c, `${here}.content.${k}`));
      });
    } else if (b.type === 'tool_use')
      throw invalidRequest(`Invalid content block '${here}': 'tool_use' blocks belong to assistant messages.`, here);
  });
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools;
}

/** One assistant message: its text, its `tool_use` blocks as tool calls; thinking and server tool blocks left out. */
function fromAssistant(m: AnthropicMessage, at: string): ChatMessage[] {
  if (typeof m.content === 'string') return m.content ? [{ role: 'assistant', content: m.content }] : [];
  const texts: string[] = [];
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  m.content.forEach((b, j) => {
    if (b.type === 'text') texts.push(b.text);
    else if (b.type === 'tool_use')
      calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } });
    else if (!DROPPED.has(b.type))
      throw invalidRequest(
        `Invalid content block '${at}.content.${j}': an assistant message takes 'text', 'tool_use' and 'thinking' blocks, not '${b.type}'.`,
        `${at}.content.${j}`,
      );
  });
  const content = texts.join('');
  if (!content && calls.length === 0) return [];
  return [{ role: 'assistant', content: content || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
}

/** The text of a `system` field or a system message (a string or text blocks). */
function systemText(content: string | readonly { type: string; text?: string }[], at: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((b, j) => {
      if (b.type !== 'text')
        throw invalidRequest(
          `Invalid content block '${at}.${j}': a system prompt takes 'text' blocks only.`,
          `${at}.${j}`,
        );
      return b.text ?? '';
    })
    .join('\n');
}

/** Every `tool_result` must answer a `tool_use` of an earlier assistant message, as Anthropic requires. */
function checkToolResults(messages: readonly ChatMessage[], at: readonly string[]): void {
  const calls = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) calls.add(c.id);
    else if (m.role === 'tool' && !calls.has(m.tool_call_id))
      throw invalidRequest(
        `Invalid value for '${at[i]}': a 'tool_result' block's tool_use_id must name a 'tool_use' block of an earlier assistant message, and none has the id '${m.tool_call_id.slice(0, 80)}'.`,
        at[i],
      );
  });
}

/**
 * Anthropic tools in the chat shape: a custom tool (no `type`, or `custom`) is a function whose
 * parameters are its `input_schema`; a server tool (`web_search_20250305`, code execution, …) or an
 * Anthropic-defined client tool (`bash_…`, `text_editor_…`, `computer_…`) is left out and named in
 * `dropped`, as the Responses adapter does with hosted tools.
 */
function toChatTools(body: MessagesRequest, dropped: string[]): ParsedMessagesRequest['chatTools'] {
  const tools = (body.tools ?? []).flatMap((t) => {
    if (t.type !== undefined && t.type !== 'custom') {
      const type = t.type.slice(0, 40);
      if (!dropped.includes(type)) dropped.push(type);
      return [];
    }
    // Anthropic takes names of up to 128 characters (an MCP server's tools in Claude Code can be
    // that long); olp offers functions by OpenAI's rule. One such tool is left out, not the request.
    if (!TOOL_NAME.test(t.name)) {
      dropped.push(t.name.slice(0, 80));
      return [];
    }
    const raw = t as { description?: unknown; input_schema?: unknown };
    return [
      {
        type: 'function',
        function: {
          name: t.name,
          ...(raw.description !== undefined ? { description: raw.description } : {}),
          ...(raw.input_schema !== undefined ? { parameters: raw.input_schema } : {}),
        },
      },
    ];
  });
  const c = body.tool_choice;
  const choice =
    c === undefined
      ? undefined
      : c.type === 'any'
        ? 'required'
        : c.type === 'tool'
          ? { type: 'function', function: { name: c.name } }
          : c.type;
  const serial = c && 'disable_parallel_tool_use' in c && c.disable_parallel_tool_use === true;
  return {
    ...(body.tools ? { tools } : {}),
    ...(choice !== undefined ? { tool_choice: choice } : {}),
    ...(serial ? { parallel_tool_calls: false } : {}),
  };
}

/** Validates a `POST /v1/messages` body and converts it to the core's chat-shaped input, or throws a 400 naming the field. */
export function parseMessagesRequest(raw: unknown): ParsedMessagesRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest('The request body must be a JSON object with `model`, `max_tokens` and `messages`.', null);
  checkDepth(raw);
  const r = messagesRequestSchema.safeParse(raw, { reportInput: true });
  if (!r.success) throw invalidRequest(...firstIssue(r.error));
  const body = r.data;
  const messages: ChatMessage[] = [];
  const at: string[] = [];
  const push = (list: ChatMessage[], where: string) => {
    for (const m of list) {
      messages.push(m);
      at.push(where);
    }
  };
  if (body.system !== undefined) {
    const text = systemText(body.system, 'system');
    if (text.trim()) push([{ role: 'system', content: text }], 'system');
  }
  body.messages.forEach((m, i) => {
    const where = `messages.${i}`;
    // Claude Code (2.1.332) sends its own system text as a message of role `system`.
    if (m.role === 'system') push([{ role: 'system', content: systemText(m.content, `${where}.content`) }], where);
    else if (m.role === 'user') push(fromUser(m, where), where);
    else push(fromAssistant(m, where), where);
  });
  checkToolResults(messages, at);
  if (!body.messages.some((m) => m.role === 'user'))
    throw invalidRequest("'messages' must contain at least one user message.", 'messages');
  if (!messages.some((m) => m.role === 'user' || m.role === 'tool'))
    throw invalidRequest("'messages' has no user content olp can send (every block was left out).", 'messages');
  const dropped: string[] = [];
  const chatTools = toChatTools(body, dropped);
  // Remote MCP servers are Anthropic's to connect to: their tools are not offered here either.
  if (body.mcp_servers?.length) dropped.push('mcp_servers');
  const responseFormat = body.output_format
    ? { type: 'json_schema' as const, json_schema: { name: 'output', schema: body.output_format.schema } }
    : undefined;
  return { body, messages, chatTools, ...(responseFormat ? { responseFormat } : {}), dropped };
}
