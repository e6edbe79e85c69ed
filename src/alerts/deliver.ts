import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/index.js';
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

interface Item {
  alert: Alert;
  request: AlertRequest;
}

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; reason: string };

/**
 * Posts alerts to the webhook one at a time, off every request's path: each try has a timeout,
 * a failed one is tried once more after a short delay, and what still fails is logged (host and
 * status, never the URL). Closing waits briefly for the alerts under way, then stops them.
 */
export function createAlertDelivery(o: DeliveryOptions) {
  const host = new URL(o.url).host;
  const timeoutMs = o.timeoutMs ?? 5000;
  const retryDelayMs = o.retryDelayMs ?? 1000;
  const maxPending = o.maxPending ?? 100;
  const doFetch = o.fetch ?? fetch;
  const queue: Item[] = [];
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let closing = false;

  async function attempt(item: Item): Promise<Attempt> {
    // The try's own timer, not `AbortSignal.timeout`: a timeout signal held only by
    // `AbortSignal.any` can be garbage-collected before it fires (Node 20 and 22), and the try
    // would then hang on a webhook that never answers, holding up every alert after it.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException(`no answer in ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    const signal = AbortSignal.any([stop.signal, timeout.signal]);
    try {
      const res = await doFetch(o.url, {
        method: 'POST',
        headers: item.request.headers,
        body: item.request.body,
        signal,
      });
      // The answer is not read: cancelling it frees the connection.
      await res.body?.cancel().catch(() => undefined);
      return res.ok
        ? { ok: true, status: res.status }
        : { ok: false, status: res.status, reason: `status ${res.status}` };
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      const reason = stop.signal.aborted
        ? 'stopped'
        : e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `no answer in ${timeoutMs / 1000} s`
          : (e.cause?.code ?? e.name ?? 'error');
      return { ok: false, status: null, reason };
    } finally {
      clearTimeout(timer);
    }
  }

  async function deliver(item: Item): Promise<void> {
    const about = { kind: item.alert.kind, threshold: item.alert.threshold, host };
    for (let tries = 1; ; tries++) {
      const r = await attempt(item);
      if (r.ok) {
        o.logger.info(
          { event: 'alert_sent', ...about, status: r.status },
          `alert sent to ${host}: ${item.alert.message}`,
        );
        return;
      }
      // A 4xx other than 408/429 will say the same again.
      const retryable = r.status === null || r.status >= 500 || r.status === 408 || r.status === 429;
      if (tries >= 2 || !retryable || stop.signal.aborted) {
        o.logger.warn(
          { event: 'alert_failed', ...about, status: r.status, reason: r.reason, tries },
          `could not send an alert to ${host} (${r.reason})`,
        );
        return;
      }
      try {
        await sleep(retryDelayMs, undefined, { signal: stop.signal, ref: false });
      } catch {
        // Stopped while waiting: the next try reports it.
      }
    }
  }

  async function drain(): Promise<void> {
    for (let item = queue.shift(); item; item = queue.shift()) await deliver(item);
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
