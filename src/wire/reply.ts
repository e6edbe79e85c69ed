import type { Response } from 'express';
import type { ConversationEvent, ConversationResult } from '../conversation/index.js';
import type { ToolCall } from './chat/shapes.js';

export type Events = AsyncGenerator<ConversationEvent, ConversationResult>;

/** Sets the conversation's headers (rate limits, session mode) on a response that has not started. */
export function setHeaders(res: Response, headers: Readonly<Record<string, string>>): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/** A thinking block of a reply: its text and the provider's signature of it (when the CLI gave one). */
export interface Thought {
  thinking: string;
  signature?: string;
}

/**
 * The whole reply of a conversation that is answered in one body, with its result; a failed
 * conversation throws its error (headers set, body unsent); undefined when the client left.
 * Thinking (of a request that shows it) comes in blocks, each ended by its signature.
 */
export async function collectReply(
  res: Response,
  events: Events,
): Promise<{ text: string; toolCalls: ToolCall[]; thinking: Thought[]; result: ConversationResult } | undefined> {
  const parts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const thinking: Thought[] = [];
  let step = await events.next();
  while (!step.done) {
    const ev = step.value;
    if (ev.type === 'thinking') {
      let last = thinking.at(-1);
      if (ev.text !== '' && (!last || last.signature !== undefined)) thinking.push((last = { thinking: '' }));
      if (last && last.signature === undefined) {
        last.thinking += ev.text;
        if (ev.signature) last.signature = ev.signature;
      }
    } else if (ev.type === 'text') parts.push(ev.text);
    else if (ev.type === 'tool_call')
      toolCalls[ev.index] = { id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } };
    else if (ev.type === 'tool_args' && toolCalls[ev.index]) toolCalls[ev.index]!.function.arguments += ev.text;
    step = await events.next();
  }
  const result = step.value;
  setHeaders(res, result.headers);
  if (result.error) throw result.error;
  return result.outcome === 'client_aborted'
    ? undefined
    : { text: parts.join(''), toolCalls: toolCalls.filter(Boolean), thinking, result };
}
