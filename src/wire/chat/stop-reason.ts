import type { StopReason } from '../../backends/index.js';
import { assertNever } from '../never.js';

// olp's one `StopReason` in Chat Completions' words (each wire format has its own exhaustive
// mapper). A reply that made calls of the client's functions stops for them whatever the CLI said
// last (chat clients run the tools of `tool_calls`).

/** Chat Completions' `finish_reason`, as the openai SDK names it. */
export type ChatFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

/** Chat's finish reason for olp's stop reason. */
export function toChatFinishReason(r: StopReason, madeCalls = false): ChatFinishReason {
  if (madeCalls) return 'tool_calls';
  switch (r.type) {
    case 'end':
    case 'stop_sequence':
    case 'interrupted':
    case 'error':
      return 'stop';
    case 'output_cap':
    case 'context_window':
      return 'length';
    case 'refusal':
      return 'content_filter';
    case 'tool_use':
      return 'tool_calls';
    default:
      return assertNever(r);
  }
}
