import type { Usage } from '../types.js';

interface ClaudeUsage {
  input_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  output_tokens?: number;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * Anthropic reports three disjoint input counts; OpenAI's prompt_tokens is their sum and
 * cached_tokens is the cache read (ARCHITECTURE section 6).
 */
export function toUsage(usage: unknown, costUsd?: unknown): Usage | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as ClaudeUsage;
  const raw = {
    input_tokens: n(u.input_tokens),
    cache_creation_input_tokens: n(u.cache_creation_input_tokens),
    cache_read_input_tokens: n(u.cache_read_input_tokens),
    output_tokens: n(u.output_tokens),
  };
  const promptTokens = raw.input_tokens + raw.cache_creation_input_tokens + raw.cache_read_input_tokens;
  const completionTokens = raw.output_tokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens: raw.cache_read_input_tokens,
    reasoningTokens: n(u.output_tokens_details?.thinking_tokens),
    raw,
    ...(typeof costUsd === 'number' && Number.isFinite(costUsd) ? { costUsd } : {}),
  };
}
