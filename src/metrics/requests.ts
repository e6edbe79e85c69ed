// What is counted of each finished request: requests, tokens, and the duration, first-token and queue
// latencies.
import type * as PromClient from 'prom-client';
import type { Principal } from '../auth/index.js';
import type { MetricsSources, ObservedRequest } from './types.js';

/** The request counters and histograms, registered in `registry`. */
export function createRequestMetrics({ Counter, Histogram }: typeof PromClient, registry: PromClient.Registry) {
  const requests = new Counter({
    name: 'olp_requests_total',
    help: 'Requests by key, model, backend, HTTP status and outcome.',
    labelNames: ['key', 'model', 'backend', 'status', 'outcome'] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'olp_tokens_total',
    help: 'Tokens by key, model and kind (prompt, completion, cached).',
    labelNames: ['key', 'model', 'kind'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'olp_request_duration_seconds',
    help: 'Request duration, arrival to the last byte.',
    labelNames: ['backend', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const ttft = new Histogram({
    name: 'olp_time_to_first_token_seconds',
    help: 'Arrival to the first token of the answer.',
    labelNames: ['backend'] as const,
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const queueWait = new Histogram({
    name: 'olp_queue_wait_seconds',
    help: 'Time a request waited for a CLI slot.',
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60],
    registers: [registry],
  });
  return { requests, tokens, duration, ttft, queueWait };
}

export type RequestMetrics = ReturnType<typeof createRequestMetrics>;

/** Counts one finished request. */
export function observeRequest(
  m: RequestMetrics,
  sources: MetricsSources,
  principal: Pick<Principal, 'name'>,
  r: ObservedRequest,
): void {
  const { requests, tokens, duration, ttft, queueWait } = m;
  // Only the model table's ids are label values: a pass-through id is the client's own string
  // (`claude-anything`), and each new one would add four series to every scrape from then on.
  const served = r.backend ? r.servedModel : null;
  const model = served === null ? '(unresolved)' : sources.models?.listed(served) ? served : 'other';
  const backend = r.backend ?? 'none';
  requests.inc({ key: principal.name, model, backend, status: String(r.status), outcome: r.outcome });
  if (r.usage) {
    tokens.inc({ key: principal.name, model, kind: 'prompt' }, r.usage.promptTokens);
    tokens.inc({ key: principal.name, model, kind: 'completion' }, r.usage.completionTokens);
    tokens.inc({ key: principal.name, model, kind: 'cached' }, r.usage.cachedTokens);
  }
  duration.observe({ backend, outcome: r.outcome }, r.durationMs / 1000);
  if (r.firstTokenMs !== null) ttft.observe({ backend }, r.firstTokenMs / 1000);
  if (r.queueMs !== null) queueWait.observe(r.queueMs / 1000);
}
