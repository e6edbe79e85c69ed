// One alert posted to the webhook: each try with its timeout, a second try after a delay for what may
// pass then, and the outcome logged (host and status, never the URL).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/index.js';
import type { Alert, AlertRequest } from './types.js';

/** What posting needs: the webhook, its host (what is logged), the timings, and the stop of closing. */
export interface Poster {
  readonly url: string;
  readonly host: string;
  readonly timeoutMs: number;
  readonly retryDelayMs: number;
  readonly doFetch: typeof fetch;
  readonly stop: AbortController;
  readonly logger: Logger;
}

export interface Item {
  alert: Alert;
  request: AlertRequest;
}

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; reason: string };

async function attempt(p: Poster, item: Item): Promise<Attempt> {
  const { stop, timeoutMs, doFetch } = p;
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
    const res = await doFetch(p.url, {
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

export async function deliver(p: Poster, item: Item): Promise<void> {
  const { host, logger } = p;
  const about = { kind: item.alert.kind, threshold: item.alert.threshold, host };
  for (let tries = 1; ; tries++) {
    const r = await attempt(p, item);
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
