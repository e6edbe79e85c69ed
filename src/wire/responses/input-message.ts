import type { Message as CoreMessage, Part, Role } from '../../core/index.js';
import { invalidRequest } from '../../errors/index.js';
import type { InputItem, Message } from './schema.js';

// Input messages and calls as the core's messages (see request.ts, which reads the items in order).

function textOf(parts: readonly { type: string; text?: string; refusal?: string }[]): string {
  return parts.map((p) => p.text ?? p.refusal ?? '').join('');
}

/** A message's speaker in the core's words: `developer` text is system text. */
function roleOf(role: Message['role']): Role {
  return role === 'developer' ? 'system' : role;
}

/** A Responses input message as the core's message (images keep their path), and as a stored item. */
export function toMessage(m: Message, at: string): { item: InputItem; message: CoreMessage } {
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

/** A call of the model's, added to the assistant message it belongs to: calls in a row (or after its text) are one. */
export function addCall(messages: CoreMessage[], id: string, name: string, args: string): void {
  const call: Part = { type: 'tool_call', id, name, arguments: args };
  const last = messages.at(-1);
  if (last?.role === 'assistant') last.parts.push(call);
  else messages.push({ role: 'assistant', parts: [call] });
}
