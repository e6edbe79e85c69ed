// A plan state as clients see it: the view, the response headers, and a refusal when its window is spent.
import { planLimitReached, type ProxyError } from '../errors/index.js';
import type { PlanRow } from '../store/index.js';
import type { OveragePolicy, PlanReport, PlanView } from './types.js';
import { scopeName, windowName, windowSpent } from './words.js';

/** Windows that limit one model family only (claude's weekly Opus and Sonnet windows). */
const PER_MODEL_WINDOW = /_(opus|sonnet|haiku)$/;

/** The plan as a client sees it (`/olp/me`). */
export function toView(s: PlanRow): PlanView {
  return {
    status: s.status as PlanReport['status'],
    window: s.window,
    resetsAt: s.resetsAt === null ? null : new Date(s.resetsAt).toISOString(),
    utilization: s.utilization,
    overage: s.overage,
  };
}

/** A current state as response headers. */
export function toHeaders(s: PlanRow): Record<string, string> {
  return {
    'x-olp-plan-status': s.status,
    ...(s.window ? { 'x-olp-plan-window': s.window } : {}),
    ...(s.resetsAt !== null ? { 'x-olp-plan-reset': new Date(s.resetsAt).toISOString() } : {}),
    ...(s.utilization !== null ? { 'x-olp-plan-utilization': String(s.utilization) } : {}),
    ...(s.overage ? { 'x-olp-plan-overage': 'true' } : {}),
  };
}

/** Why a request for this backend, in its current state `s`, is answered without its CLI, if it is. */
export function refusalOf(backend: string, s: PlanRow, overage: OveragePolicy, now: number): ProxyError | undefined {
  const at = s.resetsAt === null ? '' : ` It resets at ${new Date(s.resetsAt).toISOString()}.`;
  // Rejected with extra usage in use: the included usage is spent, the turns go on, paid.
  // Without a known reset there is no telling when to start the CLI again: it is asked. A
  // spent per-model window (weekly Opus) leaves the other models: the CLI is asked too.
  if (s.status === 'rejected' && !s.overage && s.resetsAt !== null && !PER_MODEL_WINDOW.test(s.window ?? ''))
    return windowSpent(backend, s.window, s.resetsAt, s.message, now);
  if (s.overage && overage === 'deny') {
    return planLimitReached(
      `The ${scopeName(backend)} login's plan has only paid extra usage left in ${windowName(s.window)}, ` +
        `and this key may not draw on it (olp keys set NAME --overage allow).${at}`,
      s.resetsAt,
      now,
    );
  }
  return undefined;
}
