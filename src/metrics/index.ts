import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Principal } from '../auth/index.js';
import { registerPlanGauges } from './plan-gauges.js';
import { registerProcessGauges } from './process-gauges.js';
import { createRequestMetrics, observeRequest } from './requests.js';
import type { MetricsSources, ObservedRequest } from './types.js';

export type { MetricsSources, ObservedRequest } from './types.js';

/**
 * olp's metrics in the Prometheus text format (prom-client): requests, tokens and latencies as
 * they finish; queue, CLIs, workers and plan windows read at each scrape. Labels are key names,
 * the model table's ids (`other` for pass-through ids), backends, status and outcome: never
 * tokens, prompts or other strings a client chooses.
 */
export function createMetrics(sources: MetricsSources) {
  // Loaded only when metrics are on (they are off by default): prom-client and what it brings
  // (OpenTelemetry's API) are a few MB of a daemon that otherwise holds about 20.
  const prom = createRequire(import.meta.url)('prom-client') as typeof PromClient;
  const registry = new prom.Registry();
  const m = createRequestMetrics(prom, registry);
  registerProcessGauges(prom, registry, sources);
  registerPlanGauges(prom, registry, sources);
  return {
    registry,
    /** One finished request. */
    observe(principal: Pick<Principal, 'name'>, r: ObservedRequest): void {
      observeRequest(m, sources, principal, r);
    },
    /** The exposition text and its content type. */
    async render(): Promise<{ type: string; body: string }> {
      return { type: registry.contentType, body: await registry.metrics() };
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
