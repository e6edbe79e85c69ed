import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/index.js';
import { deliver, type Item, type Poster } from './post.js';
import type { Alert, AlertRequest } from './types.js';

export interface DeliveryOptions {
  /** The webhook: a secret for Slack and Discord, so only its host is ever logged. */
  url: string;
  logger: Logger;
  timeoutMs?: number;
  retryDelayMs?: number;
  /** Alerts waiting beyond this many are dropped (a webhook that is down must not grow memory). */
  maxPending?: number;
  /** How long closing waits for the alerts under way before it gives up on them. */
  closeGraceMs?: number;
  fetch?: typeof fetch;
}

/**
 * Posts alerts to the webhook one at a time, off every request's path: each try has a timeout,
 * a failed one is tried once more after a short delay, and what still fails is logged (host and
 * status, never the URL). Closing waits briefly for the alerts under way, then stops them.
 */
export function createAlertDelivery(o: DeliveryOptions) {
  const stop = new AbortController();
  const poster: Poster = {
    url: o.url,
    host: new URL(o.url).host,
    timeoutMs: o.timeoutMs ?? 5000,
    retryDelayMs: o.retryDelayMs ?? 1000,
    doFetch: o.fetch ?? fetch,
    stop,
    logger: o.logger,
  };
  const { host } = poster;
  const maxPending = o.maxPending ?? 100;
  const queue: Item[] = [];
  let running: Promise<void> | undefined;
  let closing = false;

  async function drain(): Promise<void> {
    for (let item = queue.shift(); item; item = queue.shift()) await deliver(poster, item);
    running = undefined;
  }

  return {
    /** Queues an alert for the webhook; returns at once (false: dropped, the queue is full or closed). */
    send(alert: Alert, request: AlertRequest): boolean {
      if (closing) return false;
      if (queue.length + (running ? 1 : 0) >= maxPending) {
        o.logger.warn(
          { event: 'alert_dropped', kind: alert.kind, threshold: alert.threshold, host, pending: queue.length },
          `alert dropped: ${queue.length} are already waiting for ${host}`,
        );
        return false;
      }
      queue.push({ alert, request });
      running ??= drain();
      return true;
    },

    /** Stops delivering: waits up to the grace for what is under way, then abandons the rest. */
    async close(): Promise<void> {
      closing = true;
      if (running) {
        const grace = new AbortController();
        await Promise.race([
          running,
          sleep(o.closeGraceMs ?? 1000, undefined, { signal: grace.signal }).catch(() => {}),
        ]);
        grace.abort();
      }
      const left = queue.splice(0).length;
      stop.abort();
      await running;
      if (left > 0)
        o.logger.warn({ event: 'alert_dropped', host, pending: left }, `${left} alert(s) not sent: olp is stopping`);
    },
  };
}

export type AlertDelivery = ReturnType<typeof createAlertDelivery>;
