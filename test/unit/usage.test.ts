import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import { toClaudeUsage } from '../../src/backends/index.js';
import { toCompletionUsage } from '../../src/wire/index.js';

describe('claude usage → OpenAI usage (ARCHITECTURE section 6)', () => {
  it('prompt_tokens sums the three disjoint input counts; cached_tokens is the cache read', () => {
    const u = toClaudeUsage(
      {
        input_tokens: 10,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 3000,
        output_tokens: 42,
        output_tokens_details: { thinking_tokens: 7 },
      },
      0.5,
    );
    const wire = toCompletionUsage(u) satisfies OpenAI.CompletionUsage;
    assert.deepEqual(wire, {
      prompt_tokens: 3210,
      completion_tokens: 42,
      total_tokens: 3252,
      prompt_tokens_details: { cached_tokens: 3000 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
    assert.equal(u?.costUsd, 0.5);
    assert.deepEqual(u?.raw, {
      input_tokens: 10,
      cache_creation_input_tokens: 200,
      cache_read_input_tokens: 3000,
      output_tokens: 42,
    });
  });
  it('a usage without cache fields (older CLIs, no caching) maps input straight to prompt_tokens', () => {
    const u = toClaudeUsage({ input_tokens: 12, output_tokens: 5 });
    assert.deepEqual([u?.promptTokens, u?.cachedTokens, u?.completionTokens, u?.totalTokens], [12, 0, 5, 17]);
  });

  it('missing or nonsense counts are zero, never NaN', () => {
    const u = toClaudeUsage({ input_tokens: 'x', output_tokens: -1 });
    assert.deepEqual(toCompletionUsage(u).prompt_tokens, 0);
    assert.equal(toClaudeUsage(undefined), null);
    assert.equal(toCompletionUsage(null).total_tokens, 0);
  });
});
