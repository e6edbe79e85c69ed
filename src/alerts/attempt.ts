// One try at posting an alert: its own timer, and the answer's status or why none came.
import type { AlertRequest } from './types.js';

/** Where and how a try posts: the webhook, the try's timeout, the fetch, and the stop of closing. */
export interface Target {
  readonly url: string;
  readonly timeoutMs: number;
  readonly doFetch: typeof fetch;
  readonly stop: AbortController;
}

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; reason: string };

/** Posts the alert once: ok and the status, or not ok with the status (if any) and why. */
export async function attempt(p: Target, request: AlertRequest): Promise<Attempt> {
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
      headers: request.headers,
      body: request.body,
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
