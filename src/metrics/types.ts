// What the metrics read: a finished request as published, and the sources read at each scrape.
import type { Plans } from '../plan/index.js';

/** What the metrics count of a finished request (a conversation's result, as published). */
export interface ObservedRequest {
  readonly outcome: string;
  readonly backend: string | null;
  readonly servedModel: string | null;
  readonly status: number;
  readonly usage: { promptTokens: number; completionTokens: number; cachedTokens: number } | null;
  readonly durationMs: number;
  readonly firstTokenMs: number | null;
  readonly queueMs: number | null;
}

/** What the scrape reads at that moment. */
export interface MetricsSources {
  admission: { stats(): { running: number; queued: number; maxConcurrent: number } };
  supervisor: { readonly active: number };
  /** The cap on them all (`--max-processes`). */
  processes?: { readonly max: number } | undefined;
  workers?:
    | {
        list(): readonly { state: string }[];
        /** The memory budget of the CLIs at rest and what they hold (MB), when the pool has one. */
        memory?(): { budgetMb: number | null; heldMb: number };
      }
    | undefined;
  parked?: { readonly size: number } | undefined;
  plans?: Plans | undefined;
  /** The model table: only its ids become label values. */
  models?: { listed(id: string): boolean } | undefined;
}
