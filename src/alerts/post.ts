// One alert posted to the webhook: each try with its timeout, a second try after a delay for what may
// pass then, and the outcome logged (host and status, never the URL).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/index.js';
import { attempt, type Target } from './attempt.js';
import type { Alert, AlertRequest } from './types.js';

/** What posting needs: a try's target, the webhook's host (what is logged), the retry's delay and the log. */
export interface Poster extends Target {
  readonly host: string;
  readonly retryDelayMs: number;
  readonly logger: Logger;
}

export interface Item {
  alert: Alert;
  request: AlertRequest;
}

/** Posts one alert, a second time after a delay if the first failure may pass, and logs the outcome. */
export async function deliver(p: Poster, item: Item): Promise<void> {
  const { host, logger } = p;
  const about = { kind: item.alert.kind, threshold: item.alert.threshold, host };
  for (let tries = 1; ; tries++) {
    const r = await attempt(p, item.request);
    if (r.ok) {
      logger.info({ event: 'alert_sent', ...about, status: r.status }, `alert sent to ${host}: ${item.alert.message}`);
      return;
    }
    // A 4xx other than 408/429 will say the same again.
    const retryable = r.status === null || r.status >= 500 || r.status === 408 || r.status === 429;
    if (tries >= 2 || !retryable || p.stop.signal.aborted) {
      logger.warn(
        { event: 'alert_failed', ...about, status: r.status, reason: r.reason, tries },
        `could not send an alert to ${host} (${r.reason})`,
      );
      return;
    }
    try {
      await sleep(p.retryDelayMs, undefined, { signal: p.stop.signal, ref: false });
    } catch {
      // Stopped while waiting: the next try reports it.
    }
  }
}
