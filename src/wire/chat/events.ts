import type { ConversationEvent, ConversationResult } from '../../conversation/index.js';
import { assertNever } from '../never.js';
import { toChunk, toUsageChunk, type ChatCompletionChunk } from './shapes.js';
import { toChatFinishReason } from './stop-reason.js';

/** What one step means on a chat stream: the headers when the stream starts here, then its chunks. */
export interface MappedChunks {
  start?: Readonly<Record<string, string>>;
  chunks: ChatCompletionChunk[];
}

/** Where a chat stream is: whether it has started, and the model its chunks name. */
export interface ChatStreamState {
  readonly meta: { id: string; created: number; model: string; includeUsage: boolean };
  model: string;
  announced: boolean;
}

/** A stream that has sent nothing yet; its chunks name the model asked for until one answers. */
export function createChatStreamState(meta: ChatStreamState['meta']): ChatStreamState {
  return { meta, model: meta.model, announced: false };
}

const at = (s: ChatStreamState) => ({ ...s.meta, model: s.model });

/** The first chunk (the assistant's role), once, naming the model that answers. */
function announce(
  s: ChatStreamState,
  model: string,
  headers: Readonly<Record<string, string>>,
  out: MappedChunks,
): void {
  if (s.announced) return;
  s.announced = true;
  s.model = model;
  out.start = headers;
  out.chunks.push(toChunk(at(s), { role: 'assistant', content: '' }));
}

/** The `chat.completion.chunk`s for one core event (pure but for `state`, which it advances). */
export function toChatStreamEvents(s: ChatStreamState, ev: ConversationEvent): MappedChunks {
  const out: MappedChunks = { chunks: [] };
  switch (ev.type) {
    case 'started':
      announce(s, ev.model, ev.headers, out);
      return out;
    case 'text':
      out.chunks.push(toChunk(at(s), { content: ev.text }));
      return out;
    case 'tool_call':
      out.chunks.push(
        toChunk(at(s), {
          tool_calls: [{ index: ev.index, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } }],
        }),
      );
      return out;
    case 'tool_args':
      out.chunks.push(toChunk(at(s), { tool_calls: [{ index: ev.index, function: { arguments: ev.text } }] }));
      return out;
    case 'thinking':
      // Shown only to a request that sent reasoning_effort: `reasoning_content`, as the chat APIs
      // of reasoning models (DeepSeek, vLLM, OpenRouter) stream it. The signature has no place here.
      if (ev.text !== '') out.chunks.push(toChunk(at(s), { reasoning_content: ev.text }));
      return out;
    default:
      return assertNever(ev);
  }
}

/** The chunks that end a stream whose conversation succeeded: the finish reason, then usage if asked. */
export function toChatStreamEnd(s: ChatStreamState, r: ConversationResult): MappedChunks {
  const out: MappedChunks = { chunks: [] };
  announce(s, r.servedModel ?? s.meta.model, r.headers, out);
  out.chunks.push(toChunk(at(s), {}, toChatFinishReason(r.stopReason)));
  if (s.meta.includeUsage) out.chunks.push(toUsageChunk(at(s), r.usage));
  return out;
}
