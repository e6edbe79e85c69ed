import type { Reasoning } from '../../core/index.js';
import type { MessagesRequest } from './schema.js';

/**
 * `output_config.effort` and `thinking` as the core's reasoning. `thinking: {type: "disabled"}`
 * turns thinking off (a budget of 0; Claude Code's background requests send it) and shows none;
 * `enabled` with `budget_tokens` is that budget; `adaptive` (Claude Code's main requests) leaves
 * it to the model. Thinking is shown unless it was turned off, as before any of these were read.
 */
export function toMessagesReasoning(body: MessagesRequest): Reasoning {
  const effort = body.output_config?.effort;
  const t = body.thinking;
  const budgetTokens = t?.type === 'disabled' ? 0 : t?.type === 'enabled' ? t.budget_tokens : undefined;
  return {
    ...(effort ? { effort } : {}),
    ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    shown: t?.type !== 'disabled',
  };
}
