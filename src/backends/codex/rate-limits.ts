import type { PlanReport } from '../../plan/index.js';

interface RateWindow {
  usedPercent?: unknown;
  windowDurationMins?: unknown;
  resetsAt?: unknown;
}

/** `account/rateLimits/updated` (0.171): the ChatGPT plan's windows, from the provider's headers. */
export interface RateLimits {
  primary?: RateWindow | null;
  secondary?: RateWindow | null;
  rateLimitReachedType?: unknown;
}

/** The fuller of the two windows as a plan report; undefined when neither is known. */
export function toCodexPlanReport(limits: RateLimits | undefined): PlanReport | undefined {
  const windows = [limits?.primary, limits?.secondary].filter(
    (w): w is RateWindow => !!w && typeof w.usedPercent === 'number',
  );
  if (windows.length === 0) return undefined;
  const w = windows.reduce((a, b) => (n(b.usedPercent) > n(a.usedPercent) ? b : a));
  const minutes = n(w.windowDurationMins);
  const window =
    minutes === 300 ? 'five_hour' : minutes === 10080 ? 'seven_day' : minutes > 0 ? `${minutes}_minutes` : null;
  const utilization = Math.min(1, n(w.usedPercent) / 100);
  const reached = typeof limits?.rateLimitReachedType === 'string' || utilization >= 1;
  return {
    status: reached ? 'rejected' : utilization >= 0.8 ? 'allowed_warning' : 'allowed',
    window,
    resetsAt: n(w.resetsAt) > 0 ? n(w.resetsAt) * 1000 : null,
    utilization,
    overage: false,
  };
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
