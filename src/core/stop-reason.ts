/**
 * Why a model's answer ended, in olp's own words: each wire format says it in its own, through one
 * exhaustive mapper (src/respond). `stop_sequence` names the client's sequence the reply ended
 * before; `context_window` is the model's context filling up mid-answer (not a prompt too long,
 * which is an error); `interrupted` a turn the CLI ended early without an error.
 */
export type StopReason =
  | { type: 'end' }
  | { type: 'output_cap' }
  | { type: 'stop_sequence'; sequence: string }
  | { type: 'tool_use' }
  | { type: 'context_window' }
  | { type: 'refusal' }
  | { type: 'interrupted' }
  | { type: 'error' };

/** The answer ended by itself. */
export const END_TURN: StopReason = Object.freeze({ type: 'end' });
