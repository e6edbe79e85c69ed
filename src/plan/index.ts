import type { Channel } from 'node:diagnostics_channel';
import { planLimitReached, type ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { PlanRow, PlanStore } from '../store/index.js';
import { scopeName, windowName, windowSpent } from './words.js';

export { describePlans, LIMIT_TEXT, resetFromText, scopeName, windowName, windowSpent } from './words.js';

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

/** Windows that limit one model family only (claude's weekly Opus and Sonnet windows). */
const PER_MODEL_WINDOW = /_(opus|sonnet|haiku)$/;

/** How long a spent window whose reset the CLI did not say is shown as spent. */
const UNKNOWN_RESET_TTL_MS = 3600_000;

/** The thresholds whose crossing is logged, once per window. */
const WARN_AT = [0.8, 0.95];

/**
 * The plan state of each backend's login: kept in memory and in the state database (so a
 * restart knows a window is spent), and over once its reset time has passed. While a backend's
 * window is spent, or only paid extra usage is left and the key may not draw on it, requests are
 * answered without starting its CLI.
 */
export function createPlans(o: {
  store: PlanStore;
  logger: Logger;
  now?: () => number;
  /** Where each report's new state is published (a `PlanReported`), for observers such as alerts. */
  reported?: Channel | undefined;
}) {
  const now = o.now ?? Date.now;
  const states = new Map<string, PlanRow>();
  for (const row of o.store.list()) states.set(row.backend, row);
  /** `<backend> <window> <threshold>` warned about, until that window's reset. */
  const warned = new Map<string, number>();

  /** The backend's state, unless its window has reset since (one without a known reset is kept an hour). */
  function current(backend: string): PlanRow | undefined {
    const s = states.get(backend);
    if (!s) return undefined;
    if (s.resetsAt !== null ? s.resetsAt <= now() : s.updatedAt + UNKNOWN_RESET_TTL_MS <= now()) return undefined;
    return s;
  }

  function toView(s: PlanRow): PlanView {
    return {
      status: s.status as PlanReport['status'],
      window: s.window,
      resetsAt: s.resetsAt === null ? null : new Date(s.resetsAt).toISOString(),
      utilization: s.utilization,
      overage: s.overage,
    };
  }

  /** Every login's current state for each CLI (metrics, reports). */
  function all(): { backend: string; login: string | null; view: PlanView }[] {
    const out: { backend: string; login: string | null; view: PlanView }[] = [];
    for (const scope of states.keys()) {
      const s = current(scope);
      if (s) out.push({ ...fromScope(scope), view: toView(s) });
    }
    return out;
  }

  return {
    /** A CLI's report, from a turn just run. */
    report(backend: string, r: PlanReport): void {
      const before = current(backend);
      // A report without a utilization keeps the last one for the same window.
      const utilization =
        r.utilization ??
        (before && before.window === r.window && before.resetsAt === r.resetsAt ? before.utilization : null);
      const row: PlanRow = {
        backend,
        status: r.status,
        window: r.window,
        resetsAt: r.resetsAt,
        utilization,
        overage: r.overage,
        message: r.message ?? null,
        updatedAt: now(),
      };
      states.set(backend, row);
      try {
        o.store.save(row);
      } catch (err) {
        o.logger.warn({ event: 'plan_save_failed', backend, err }, 'could not save the plan state');
      }
      if (o.reported?.hasSubscribers) o.reported.publish({ scope: backend, row } satisfies PlanReported);
      if (r.status === 'rejected' && !r.overage && (before?.status !== 'rejected' || before.overage)) {
        o.logger.warn(
          {
            event: 'plan_limit_reached',
            backend,
            window: r.window,
            resetsAt: row.resetsAt === null ? null : new Date(row.resetsAt).toISOString(),
          },
          `${scopeName(backend)}: ${windowName(r.window)} is spent`,
        );
      }
      if (r.overage && !before?.overage)
        o.logger.warn(
          { event: 'plan_overage', backend, window: r.window },
          `${scopeName(backend)}: the plan's included usage is spent; turns now draw on paid extra usage`,
        );
      for (const t of WARN_AT) {
        const id = `${backend} ${r.window} ${t}`;
        if (utilization === null || utilization < t || (warned.get(id) ?? 0) > now()) continue;
        warned.set(id, r.resetsAt ?? now() + 3600_000);
        o.logger.warn(
          { event: 'plan_utilization', backend, window: r.window, utilization, threshold: t },
          `${scopeName(backend)}: ${Math.round(utilization * 100)} % of ${windowName(r.window)} is used`,
        );
      }
    },

    /** Why a request for this backend is answered without its CLI, if it is. */
    refusal(backend: string, overage: OveragePolicy): ProxyError | undefined {
      const s = current(backend);
      if (!s) return undefined;
      const at = s.resetsAt === null ? '' : ` It resets at ${new Date(s.resetsAt).toISOString()}.`;
      // Rejected with extra usage in use: the included usage is spent, the turns go on, paid.
      // Without a known reset there is no telling when to start the CLI again: it is asked. A
      // spent per-model window (weekly Opus) leaves the other models: the CLI is asked too.
      if (s.status === 'rejected' && !s.overage && s.resetsAt !== null && !PER_MODEL_WINDOW.test(s.window ?? ''))
        return windowSpent(backend, s.window, s.resetsAt, s.message, now());
      if (s.overage && overage === 'deny') {
        return planLimitReached(
          `The ${scopeName(backend)} login's plan has only paid extra usage left in ${windowName(s.window)}, and this key may not draw on it (olp keys set NAME --overage allow).${at}`,
          s.resetsAt,
          now(),
        );
      }
      return undefined;
    },

    /** The last-known state as response headers (none when unknown). */
    headers(backend: string): Record<string, string> {
      const s = current(backend);
      if (!s) return {};
      return {
        'x-olp-plan-status': s.status,
        ...(s.window ? { 'x-olp-plan-window': s.window } : {}),
        ...(s.resetsAt !== null ? { 'x-olp-plan-reset': new Date(s.resetsAt).toISOString() } : {}),
        ...(s.utilization !== null ? { 'x-olp-plan-utilization': String(s.utilization) } : {}),
        ...(s.overage ? { 'x-olp-plan-overage': 'true' } : {}),
      };
    },

    /** Whether the backend's login is drawing on paid extra usage now. */
    onOverage(backend: string): boolean {
      return current(backend)?.overage === true;
    },

    /** One login's current states by CLI (`/olp/me`): null for the machine's own login. */
    view(login: string | null): Record<string, PlanView> {
      const out: Record<string, PlanView> = {};
      for (const { backend, login: l, view } of all()) if (l === login) out[backend] = view;
      return out;
    },

    all,
  };
}

export type Plans = ReturnType<typeof createPlans>;

/**
 * Whose plan window a turn draws on: the CLI's, of the machine's own login (`claude`), or of a
 * key's login (`claude@alice`). Plan states, refusals and headers are kept per scope.
 */
export function planScope(backend: string, login: string | null): string {
  return login === null ? backend : `${backend}@${login}`;
}

/** The CLI and login of a plan scope. */
function fromScope(scope: string): { backend: string; login: string | null } {
  const at = scope.indexOf('@');
  return at < 0 ? { backend: scope, login: null } : { backend: scope.slice(0, at), login: scope.slice(at + 1) };
}

/** A key's overage policy: its own, else deny for members and allow for owners. */
export function overagePolicy(key: { role: string; policy: { overage?: OveragePolicy | null } }): OveragePolicy {
  return key.policy.overage ?? (key.role === 'owner' ? 'allow' : 'deny');
}
