// The plan gauges read at each scrape: each login's plan window, as its CLI last reported it.
import type * as PromClient from 'prom-client';
import { MACHINE_LOGIN } from '../logins/index.js';
import type { MetricsSources } from './types.js';

type Prom = typeof PromClient;

/** Each login's plan window: its use and whether it is spent. */
export function registerPlanGauges({ Gauge }: Prom, registry: PromClient.Registry, sources: MetricsSources): void {
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
}
