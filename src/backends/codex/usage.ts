import type { Usage } from '../types.js';

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** codex's raw counts, as `turn.completed.usage` spells them (cumulative per thread). */
export function toRawCodexUsage(usage: unknown): Record<string, number> | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as Record<string, unknown>;
  return {
    input_tokens: n(u.input_tokens),
    cached_input_tokens: n(u.cached_input_tokens),
    cache_write_input_tokens: n(u.cache_write_input_tokens),
    output_tokens: n(u.output_tokens),
    reasoning_output_tokens: n(u.reasoning_output_tokens),
  };
}

/** The app-server's running total (`thread/tokenUsage/updated`) in the names `codex exec` uses. */
export function toRawAppServerUsage(total: Record<string, unknown>): Record<string, number> {
  return {
    input_tokens: n(total.inputTokens),
    cached_input_tokens: n(total.cachedInputTokens),
    cache_write_input_tokens: n(total.cacheWriteInputTokens),
    output_tokens: n(total.outputTokens),
    reasoning_output_tokens: n(total.reasoningOutputTokens),
  };
}

/**
 * OpenAI's figures from codex's counts (ARCHITECTURE section 6): `input_tokens` already includes
 * the cached part, so it is the prompt total; `output_tokens` includes reasoning.
 */
export function toCodexUsage(raw: Record<string, number> | null): Usage | null {
  if (!raw) return null;
  const promptTokens = raw.input_tokens ?? 0;
  const completionTokens = raw.output_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens: raw.cached_input_tokens ?? 0,
    reasoningTokens: raw.reasoning_output_tokens ?? 0,
    raw,
  };
}

/** This turn's share of a thread's running total: the counts minus the thread's previous snapshot. */
export function subtractUsage(
  total: Record<string, number>,
  base: Readonly<Record<string, number>>,
): Record<string, number> {
  return Object.fromEntries(Object.entries(total).map(([k, v]) => [k, Math.max(0, v - (base[k] ?? 0))]));
}
