import type { StopReason } from '../backends/index.js';
import { assertNever } from './never.js';

// olp's one `StopReason`, said in each wire format's own words: one exhaustive mapper per format.
// A reply that made calls of the client's functions stops for them whatever the CLI said last
// (Claude Code runs the tools of a `tool_use` stop; chat clients those of `tool_calls`).

/** Chat Completions' `finish_reason`, as the openai SDK names it. */
export type ChatFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

/** Anthropic's `stop_reason` (the @anthropic-ai/sdk `StopReason`). */
export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/** Why a Response is incomplete (the openai SDK's `Response.IncompleteDetails`). */
export type IncompleteReason = 'max_output_tokens' | 'content_filter';

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

/** Why a Response is incomplete for olp's stop reason; null when it is complete (or failed). */
export function toIncompleteReason(r: StopReason): IncompleteReason | null {
  switch (r.type) {
    case 'end':
    case 'stop_sequence':
    case 'tool_use':
    case 'interrupted':
    case 'error':
      return null;
    case 'output_cap':
    case 'context_window':
      return 'max_output_tokens';
    case 'refusal':
      return 'content_filter';
    default:
      return assertNever(r);
  }
}
