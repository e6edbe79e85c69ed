// The process gauges read at each scrape: CLI runs, the queue, processes, parked turns and workers.
import type * as PromClient from 'prom-client';
import type { MetricsSources } from './types.js';

type Prom = typeof PromClient;

/** Runs, queue, processes, parked turns and workers. */
export function registerProcessGauges({ Gauge }: Prom, registry: PromClient.Registry, sources: MetricsSources): void {
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
  registerMemoryGauges(Gauge, registry, sources);
}

/** The memory budget of the live CLIs at rest (`--worker-memory`) and what they hold. */
function registerMemoryGauges(Gauge: Prom['Gauge'], registry: PromClient.Registry, sources: MetricsSources): void {
  const memory = sources.workers?.memory?.bind(sources.workers);
  if (!memory) return;
  new Gauge({
    name: 'olp_worker_memory_budget_bytes',
    help: 'Memory the live CLIs that run nothing (idle workers, spares) may hold (--worker-memory).',
    registers: [registry],
    collect() {
      this.set((memory().budgetMb ?? 0) * 1024 * 1024);
    },
  });
  new Gauge({
    name: 'olp_worker_memory_held_bytes',
    help: 'Memory (PSS, as last measured) the live CLIs that run nothing hold.',
    registers: [registry],
    collect() {
      this.set(memory().heldMb * 1024 * 1024);
    },
  });
}
