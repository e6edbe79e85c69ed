// What plan reports, views and policies look like, for the plans and for what reads them.
import type { PlanRow } from '../store/index.js';

/** What `reported` publishes after each report: the scope (`claude`, `claude@alice`) and its new state. */
export interface PlanReported {
  scope: string;
  row: PlanRow;
}

/**
 * What a CLI says of its login's subscription plan (claude's `rate_limit_event`, codex's usage
 * limit): whether the current window allows requests, which window, when it resets, how much of
 * it is used, and whether paid extra usage ("overage") is being drawn.
 */
export interface PlanReport {
  status: 'allowed' | 'allowed_warning' | 'rejected';
  /** `five_hour`, `seven_day`, `seven_day_opus`, `overage`, … as the CLI names it; null if unsaid. */
  window: string | null;
  /** When the window resets (epoch ms), if said. */
  resetsAt: number | null;
  /** 0–1, when the CLI reports it. */
  utilization: number | null;
  overage: boolean;
  /** The CLI's own words for a spent window ("You've hit your session limit · resets 4:19pm (UTC)"). */
  message?: string | null;
}

export type OveragePolicy = 'allow' | 'deny';

/** The plan as a client sees it (`/olp/me`, headers). */
export interface PlanView {
  status: PlanReport['status'];
  window: string | null;
  resetsAt: string | null;
  utilization: number | null;
  overage: boolean;
}
