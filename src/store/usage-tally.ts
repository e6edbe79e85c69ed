import { addCompensated, type CompensatedSum, compensatedTotal } from './compensated-sum.js';
import type { UsageGroup } from './usage-query.js';
import type { LedgerRecord } from './usage-row.js';

// `summarizeUsage` over exported rows instead of the table: the same counts and sums per group (the
// group from usage-group.ts), so a roll-up of several ledgers reads exactly as `olp usage` reads one.
// Each rule mirrors usage-query.ts.

interface Sums {
  requests: number;
  ok: number;
  prompt: number;
  cached: number;
  completion: number;
  okPrompt: number;
  okCached: number;
  /** SQLite's sum() of REAL values: Kahan-Babuska-Neumaier (3.43+), null while no value was non-null. */
  cost: CompensatedSum | null;
}

/** SQLite's BINARY order of UTF-8 text: code point order (JS's `<` compares UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Adds up exported rows into groups the caller names; `groups()` reads as `store.usage.summarize` does. */
export function createUsageTally() {
  const sums = new Map<string, Sums>();
  return {
    add(group: string, row: LedgerRecord): void {
      let s = sums.get(group);
      if (!s) {
        s = { requests: 0, ok: 0, prompt: 0, cached: 0, completion: 0, okPrompt: 0, okCached: 0, cost: null };
        sums.set(group, s);
      }
      const ok = row.outcome === 'ok';
      s.requests++;
      if (ok) s.ok++;
      s.prompt += row.usage.prompt_tokens;
      s.cached += row.usage.cached_tokens;
      s.completion += row.usage.completion_tokens;
      if (ok) {
        s.okPrompt += row.usage.prompt_tokens;
        s.okCached += row.usage.cached_tokens;
      }
      if (row.cost_usd !== null) addCompensated((s.cost ??= { sum: 0, err: 0 }), row.cost_usd);
    },
    groups(): UsageGroup[] {
      return [...sums.entries()]
        .sort(([a], [b]) => byCodePoint(a, b))
        .map(([group, s]) => ({
          group,
          requests: s.requests,
          ok: s.ok,
          errors: s.requests - s.ok,
          promptTokens: s.prompt,
          cachedTokens: s.cached,
          completionTokens: s.completion,
          cacheHitShare: s.okPrompt > 0 ? s.okCached / s.okPrompt : null,
          costUsd: s.cost === null ? null : compensatedTotal(s.cost),
        }));
    },
  };
}

export type UsageTally = ReturnType<typeof createUsageTally>;
