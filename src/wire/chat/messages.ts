import type { Message, Part } from '../../core/index.js';
import type { ChatMessage } from './request.js';

type UserContent = Extract<ChatMessage, { role: 'user' }>['content'];
type TextContent = Extract<ChatMessage, { role: 'system' | 'tool' }>['content'];

/** Text parts (or a string) as one text, the parts on their own lines. */
function joinText(content: TextContent): string {
  return typeof content === 'string' ? content : content.map((p) => p.text).join('\n');
}

/** The `file_data` of a chat `file` part (a data URL), if it has one. */
function fileData(part: { type: string }): string | undefined {
  const data = (part as { file?: { file_data?: unknown } }).file?.file_data;
  return typeof data === 'string' ? data : undefined;
}

/** A user message's content as parts: images and documents keep where they were sent (`messages.3.content.1`). */
function userParts(content: UserContent, at: string): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, j): Part => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') return { type: 'image', url: p.image_url.url, at: `${at}.${j}` };
    const data = p.type === 'file' ? fileData(p) : undefined;
    if (data !== undefined) return { type: 'document', url: data, at: `${at}.${j}` };
    return { type: 'other', kind: p.type, at: `${at}.${j}` };
  });
}

/**
 * An assistant message as parts: its content as one text (parts on their own lines, refusal parts
 * as text), its `refusal` as another, then its tool calls and the legacy `function_call` (a call
 * answered by name: no id).
 */
function assistantParts(m: Extract<ChatMessage, { role: 'assistant' }>): Part[] {
  const content = m.content;
  const text =
    content == null
      ? undefined
      : typeof content === 'string'
        ? content
        : content.map((p) => (p.type === 'text' ? p.text : p.refusal)).join('\n');
  return [
    ...(text !== undefined ? [{ type: 'text' as const, text }] : []),
    ...(m.refusal != null ? [{ type: 'text' as const, text: m.refusal }] : []),
    ...(m.tool_calls ?? []).map(
      (c): Part => ({ type: 'tool_call', id: c.id, name: c.function.name, arguments: c.function.arguments }),
    ),
    ...(m.function_call
      ? [{ type: 'tool_call' as const, id: '', name: m.function_call.name, arguments: m.function_call.arguments }]
      : []),
  ];
}

/** One chat message in the core's words. */
function toCoreMessage(m: ChatMessage, i: number): Message {
  const at = `messages.${i}.content`;
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', parts: [{ type: 'text', text: joinText(m.content) }] };
    case 'user':
      return { role: 'user', parts: userParts(m.content, at), ...(m.name ? { name: m.name } : {}) };
    case 'assistant':
      return { role: 'assistant', parts: assistantParts(m) };
    case 'tool':
      return {
        role: 'user',
        parts: [{ type: 'tool_result', callId: m.tool_call_id, content: joinText(m.content) }],
      };
    case 'function':
      return {
        role: 'user',
        parts: [{ type: 'tool_result', callId: '', name: m.name, content: m.content ?? '' }],
      };
  }
}

/**
 * Chat messages as the core's conversation, one message each: `developer` is system text; a `tool`
 * message is a user message of one tool result, a legacy `function` message one that answers its
 * call by name. Pure; also reads the chat-shaped messages older versions stored for a response.
 */
export function toCoreMessages(messages: readonly ChatMessage[]): Message[] {
  return messages.map(toCoreMessage);
}
