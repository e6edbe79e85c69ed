import type { Message } from '../../core/index.js';
import { toCoreMessages } from '../chat/messages.js';
import type { ChatMessage } from '../chat/request.js';

/** A stored row of the core's messages: each has its parts (a chat-shaped message never has `parts`). */
function isCore(messages: readonly unknown[]): messages is Message[] {
  return messages.every((m) => Array.isArray((m as { parts?: unknown } | null)?.parts));
}

/**
 * A stored response's input as the core's messages. Rows written now hold them as they are; rows
 * of earlier versions hold the chat-shaped messages (`content`, `tool_calls`, `tool` messages) the
 * Responses adapter made then, read through the chat mapping. A part a 400 can be about is named
 * as `previous_response_id`: it is in the stored conversation that field continues, not in this request.
 */
export function fromStoredMessages(messages: readonly unknown[]): Message[] {
  const core = isCore(messages) ? messages : toCoreMessages(messages as ChatMessage[]);
  return core.map((m) => ({
    ...m,
    parts: m.parts.map((p) => ('at' in p ? { ...p, at: 'previous_response_id' } : p)),
  }));
}
