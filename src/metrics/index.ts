import { MACHINE_LOGIN } from '../logins/index.js';
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Principal } from '../auth/index.js';
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
  workers?: { list(): readonly { state: string }[] } | undefined;
  parked?: { readonly size: number } | undefined;
  plans?: Plans | undefined;
  /** The model table: only its ids become label values. */
  models?: { listed(id: string): boolean } | undefined;
}

/**
 * olp's metrics in the Prometheus text format (prom-client): requests, tokens and latencies as
 * they finish; queue, CLIs, workers and plan windows read at each scrape. Labels are key names,
 * the model table's ids (`other` for pass-through ids), backends, status and outcome: never
 * tokens, prompts or other strings a client chooses.
 */
export function createMetrics(sources: MetricsSources) {
  // Loaded only when metrics are on (they are off by default): prom-client and what it brings
  // (OpenTelemetry's API) are a few MB of a daemon that otherwise holds about 20.
  const { Counter, Gauge, Histogram, Registry } = createRequire(import.meta.url)('prom-client') as typeof PromClient;
  const registry = new Registry();
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
  new Gauge({
    name: 'olp_cli_runs_in_flight',
    help: 'CLI runs admitted and running.',
    registers: [registry],
    collect() {
      this.set(sources.admission.stats().running);
    },
  });
  new Gauge({
    name: 'olp_queue_length',
    help: 'Requests waiting for a CLI slot.',
    registers: [registry],
    collect() {
      this.set(sources.admission.stats().queued);
    },
  });
  new Gauge({
    name: 'olp_cli_processes',
    help: 'CLI processes olp holds (turns in flight, live workers, spares, parked turns, ones being stopped).',
    registers: [registry],
    collect() {
      this.set(sources.supervisor.active);
    },
  });
  if (sources.processes)
    new Gauge({
      name: 'olp_cli_processes_max',
      help: 'Most CLI processes olp holds at once (--max-processes).',
      registers: [registry],
      collect() {
        this.set(sources.processes!.max);
      },
    });
  new Gauge({
    name: 'olp_parked_turns',
    help: "Turns waiting, their CLI alive, for the client's tool results (they count against the key's concurrency).",
    registers: [registry],
    collect() {
      this.set(sources.parked?.size ?? 0);
    },
  });
  new Gauge({
    name: 'olp_workers',
    help: 'Live CLI workers by state.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const w of sources.workers?.list() ?? []) this.inc({ state: w.state });
    },
  });
  new Gauge({
    name: 'olp_plan_utilization',
    help: "Share (0-1) of the login's plan window used, as the CLI last reported it.",
    labelNames: ['backend', 'login', 'window'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { backend, login, view: p } of sources.plans?.all() ?? [])
        if (p.utilization !== null)
          this.set({ backend, login: login ?? MACHINE_LOGIN, window: p.window ?? '' }, p.utilization);
    },
  });
  new Gauge({
    name: 'olp_plan_rejected',
    help: "1 while the login's plan window is spent (requests answered 429 plan_limit_reached), else 0.",
    labelNames: ['backend', 'login'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { backend, login, view: p } of sources.plans?.all() ?? [])
        this.set({ backend, login: login ?? MACHINE_LOGIN }, p.status === 'rejected' && !p.overage ? 1 : 0);
    },
  });

  return {
    registry,
    /** One finished request. */
    observe(principal: Pick<Principal, 'name'>, r: ObservedRequest): void {
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
    },
    /** The exposition text and its content type. */
    async render(): Promise<{ type: string; body: string }> {
      return { type: registry.contentType, body: await registry.metrics() };
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
