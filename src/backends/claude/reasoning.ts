import type { Effort, ReasoningSetting } from '../../core/index.js';

// How claude takes a request's reasoning (checked against 2.1.197 and 2.1.332 with a loopback
// Messages stand-in; what reached the API in brackets):
// - `--effort <low|medium|high|xhigh|max>` sets `output_config.effort` on the models that take
//   one (the adaptive-thinking ones: sonnet, opus; haiku on 2.1.332); a model with a thinking
//   budget instead (claude-sonnet-4-5, 2.1.197's haiku 4.5) gets no effort. Any other value is
//   warned about on stderr and the model's default is used.
// - `MAX_THINKING_TOKENS=0` turns thinking off (`thinking: {type: "disabled"}`) on 2.1.197, and on
//   2.1.332 for budget models only: its adaptive models keep thinking. `MAX_THINKING_TOKENS=N`
//   is a budget model's `budget_tokens` (31999 unset); adaptive models ignore it.
// A live claude could change both per turn on its stdin (`apply_flag_settings` with `effortLevel`,
// `set_max_thinking_tokens`); olp starts it with them instead, and a turn asking for other ones
// runs on another process (see the worker's fit).

/** claude's word for each effort: `minimal` and `none` are its least, `low`. */
const CLAUDE_EFFORT: Record<Effort, string> = {
  none: 'low',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

/** The `--effort` flag for a turn's reasoning (none for the model's default). */
export function toEffortArgs(r: ReasoningSetting | undefined): string[] {
  return r?.effort ? ['--effort', CLAUDE_EFFORT[r.effort]] : [];
}

/** `MAX_THINKING_TOKENS` for a turn's reasoning: 0 turns thinking off (`none`, or a budget of 0). */
export function toThinkingTokens(r: ReasoningSetting | undefined): string | undefined {
  if (r?.effort === 'none') return '0';
  return r?.budgetTokens !== undefined ? String(r.budgetTokens) : undefined;
}
