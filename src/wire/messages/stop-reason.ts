import type { StopReason } from '../../backends/index.js';
import { assertNever } from '../never.js';

// olp's one `StopReason` in Anthropic's words (each wire format has its own exhaustive mapper).
// A reply that made calls of the client's functions stops for them whatever the CLI said last
// (Claude Code runs the tools of a `tool_use` stop).

/** Anthropic's `stop_reason` (the @anthropic-ai/sdk `StopReason`). */
export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/**
 * Anthropic's stop reason and stop sequence for olp's stop reason. A turn the CLI ended early
 * without an error is `pause_turn`: sent back as it is, the conversation goes on.
 */
export function toAnthropicStop(
  r: StopReason,
  madeCalls = false,
): { stop_reason: AnthropicStopReason; stop_sequence: string | null } {
  const plain = (stop_reason: AnthropicStopReason) => ({ stop_reason, stop_sequence: null });
  if (madeCalls) return plain('tool_use');
  switch (r.type) {
    case 'end':
    case 'error':
      return plain('end_turn');
    case 'output_cap':
      return plain('max_tokens');
    case 'stop_sequence':
      return { stop_reason: 'stop_sequence', stop_sequence: r.sequence };
    case 'tool_use':
      return plain('tool_use');
    case 'context_window':
      return plain('model_context_window_exceeded');
    case 'refusal':
      return plain('refusal');
    case 'interrupted':
      return plain('pause_turn');
    default:
      return assertNever(r);
  }
}
