/**
 * How much the model thinks before it answers, in olp's own words: every wire format's effort
 * field (chat's `reasoning_effort`, Responses' `reasoning.effort`, Messages' `output_config.effort`
 * and `thinking`) maps here, and each backend says it in its CLI's words. `none` asks for no
 * thinking at all: the CLI turns thinking off where it can, else thinks as little as it allows.
 * `minimal` is the least effort that still thinks; `max` the most the CLI has.
 */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** The efforts, least first. */
export const EFFORTS: readonly Effort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** What a request asks of the model's thinking: how much, and whether the client reads it back. */
export interface Reasoning {
  /** Absent: the CLI's own default for the model. */
  effort?: Effort | undefined;
  /**
   * The most tokens the model may think for (Anthropic's `budget_tokens`), where the CLI takes a
   * budget; 0 turns thinking off (Anthropic's `thinking: {type: "disabled"}`), whatever the effort.
   */
  budgetTokens?: number | undefined;
  /** The client reads the model's thinking back, in its format's own reasoning shape. */
  shown: boolean;
}

/** What of a request's `Reasoning` the CLI is started with (what a live CLI must have been started with). */
export type ReasoningSetting = Omit<Reasoning, 'shown'>;

/** The CLI's part of a request's reasoning; undefined when it asks nothing of the CLI. */
export function toReasoningSetting(r: Reasoning | undefined): ReasoningSetting | undefined {
  if (!r || (r.effort === undefined && r.budgetTokens === undefined)) return undefined;
  return {
    ...(r.effort !== undefined ? { effort: r.effort } : {}),
    ...(r.budgetTokens !== undefined ? { budgetTokens: r.budgetTokens } : {}),
  };
}

/** A reasoning setting as one short string ('' for none): what a live CLI's fit compares. */
export function reasoningKey(r: ReasoningSetting | undefined): string {
  if (!r) return '';
  return `${r.effort ?? ''}${r.budgetTokens !== undefined ? `:${r.budgetTokens}` : ''}`;
}
