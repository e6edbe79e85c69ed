import type { StopReason } from '../../backends/index.js';
import { assertNever } from '../never.js';

// olp's one `StopReason` in the Responses API's words (each wire format has its own exhaustive mapper).

/** Why a Response is incomplete (the openai SDK's `Response.IncompleteDetails`). */
export type IncompleteReason = 'max_output_tokens' | 'content_filter';

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
