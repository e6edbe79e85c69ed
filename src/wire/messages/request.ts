import type { Message } from '../../core/index.js';
import { invalidRequest } from '../../errors/index.js';
import { type OfferedFunction, TOOL_NAME, type ToolOffer } from '../../tools/index.js';
import { checkDepth } from '../depth.js';
import { firstIssue } from '../../errors/index.js';
import { fromAssistant, fromUser } from './blocks.js';
import { messagesRequestSchema, type MessagesRequest } from './schema.js';

export type { MessagesRequest } from './schema.js';

/** A validated Messages request as the conversation core takes it (its messages), and what was left out. */
export interface ParsedMessagesRequest {
  body: MessagesRequest;
  messages: Message[];
  /** The tools and tool choice, for the core's `toolRequest` to check. */
  tools: ToolOffer;
  responseFormat?: { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown> } };
  /**
   * Tool types (and `mcp_servers`) the model is not offered, as olp cannot run them, and tools
   * named past olp's rule.
   */
  dropped: string[];
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
function checkToolResults(messages: readonly Message[], at: readonly string[]): void {
  const calls = new Set<string>();
  messages.forEach((m, i) => {
    for (const p of m.parts) {
      if (p.type === 'tool_call') calls.add(p.id);
      else if (p.type === 'tool_result' && !calls.has(p.callId))
        throw invalidRequest(
          `Invalid value for '${at[i]}': a 'tool_result' block's tool_use_id must name a 'tool_use' block of an ` +
            `earlier assistant message, and none has the id '${p.callId.slice(0, 80)}'.`,
          at[i],
        );
    }
  });
}

/**
 * Anthropic tools as olp offers them: a custom tool (no `type`, or `custom`) is a function whose
 * parameters are its `input_schema`; a server tool (`web_search_20250305`, code execution, …) or an
 * Anthropic-defined client tool (`bash_…`, `text_editor_…`, `computer_…`) is left out and named in
 * `dropped`, as the Responses adapter does with hosted tools.
 */
function toToolOffer(body: MessagesRequest, dropped: string[]): ToolOffer {
  const functions = (body.tools ?? []).flatMap((t, i): OfferedFunction[] => {
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
        at: `tools.${i}`,
        name: t.name,
        description: raw.description,
        parameters: raw.input_schema,
        schemaField: 'input_schema',
      },
    ];
  });
  const c = body.tool_choice;
  const choice =
    c === undefined ? 'auto' : c.type === 'any' ? 'required' : c.type === 'tool' ? { name: c.name } : c.type;
  const serial = c && 'disable_parallel_tool_use' in c && c.disable_parallel_tool_use === true;
  return {
    functions: body.tools ? functions : undefined,
    listAt: 'tools',
    choice,
    choiceAt: 'tool_choice',
    parallel: !serial,
  };
}

/** Validates a `POST /v1/messages` body and maps it into the core's messages, or throws a 400 naming the field. */
export function parseMessagesRequest(raw: unknown): ParsedMessagesRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest('The request body must be a JSON object with `model`, `max_tokens` and `messages`.', null);
  checkDepth(raw);
  const r = messagesRequestSchema.safeParse(raw, { reportInput: true });
  if (!r.success) throw invalidRequest(...firstIssue(r.error));
  const body = r.data;
  const messages: Message[] = [];
  const at: string[] = [];
  const push = (m: Message | undefined, where: string) => {
    if (!m) return;
    messages.push(m);
    at.push(where);
  };
  const system = (text: string): Message => ({ role: 'system', parts: [{ type: 'text', text }] });
  if (body.system !== undefined) {
    const text = systemText(body.system, 'system');
    if (text.trim()) push(system(text), 'system');
  }
  body.messages.forEach((m, i) => {
    const where = `messages.${i}`;
    // Claude Code (2.1.332) sends its own system text as a message of role `system`.
    if (m.role === 'system') push(system(systemText(m.content, `${where}.content`)), where);
    else if (m.role === 'user') push(fromUser(m, where), where);
    else push(fromAssistant(m, where), where);
  });
  checkToolResults(messages, at);
  if (!body.messages.some((m) => m.role === 'user'))
    throw invalidRequest("'messages' must contain at least one user message.", 'messages');
  if (!messages.some((m) => m.role === 'user'))
    throw invalidRequest("'messages' has no user content olp can send (every block was left out).", 'messages');
  const dropped: string[] = [];
  const tools = toToolOffer(body, dropped);
  // Remote MCP servers are Anthropic's to connect to: their tools are not offered here either.
  if (body.mcp_servers?.length) dropped.push('mcp_servers');
  const responseFormat = body.output_format
    ? { type: 'json_schema' as const, json_schema: { name: 'output', schema: body.output_format.schema } }
    : undefined;
  return { body, messages, tools, ...(responseFormat ? { responseFormat } : {}), dropped };
}
