import type { Channel } from 'node:diagnostics_channel';
import type { ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { PlanRow, PlanStore } from '../store/index.js';
import { logReport } from './report.js';
import type { OveragePolicy, PlanReport, PlanReported, PlanView } from './types.js';
import { refusalOf, toHeaders, toView } from './view.js';

export { describePlans, LIMIT_TEXT, resetFromText, scopeName, windowName, windowSpent } from './words.js';
export type { OveragePolicy, PlanReport, PlanReported, PlanView } from './types.js';

/** How long a spent window whose reset the CLI did not say is shown as spent. */
const UNKNOWN_RESET_TTL_MS = 3600_000;

/** The plans' states by scope, and their clock. */
interface PlansState {
  readonly states: Map<string, PlanRow>;
  readonly now: () => number;
}

/** The scope's state, unless its window has reset since (one without a known reset is kept an hour). */
function currentOf(p: PlansState, scope: string): PlanRow | undefined {
  const s = p.states.get(scope);
  if (!s) return undefined;
  if (s.resetsAt !== null ? s.resetsAt <= p.now() : s.updatedAt + UNKNOWN_RESET_TTL_MS <= p.now()) return undefined;
  return s;
}

/** Every login's current state for each CLI (metrics, reports). */
function allOf(p: PlansState): { backend: string; login: string | null; view: PlanView }[] {
  const out: { backend: string; login: string | null; view: PlanView }[] = [];
  for (const scope of p.states.keys()) {
    const s = currentOf(p, scope);
    if (s) out.push({ ...fromScope(scope), view: toView(s) });
  }
  return out;
}

/** A report as the scope's new state. */
function toRow(backend: string, r: PlanReport, before: PlanRow | undefined, at: number): PlanRow {
  // A report without a utilization keeps the last one for the same window.
  const utilization =
    r.utilization ??
    (before && before.window === r.window && before.resetsAt === r.resetsAt ? before.utilization : null);
  return {
    backend,
    status: r.status,
    window: r.window,
    resetsAt: r.resetsAt,
    utilization,
    overage: r.overage,
    message: r.message ?? null,
    updatedAt: at,
  };
}

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
  const p: PlansState = { states: new Map(), now };
  const { states } = p;
  for (const row of o.store.list()) states.set(row.backend, row);
  /** `<backend> <window> <threshold>` warned about, until that window's reset. */
  const warned = new Map<string, number>();

  const current = (backend: string) => currentOf(p, backend);
  /** Every login's current state for each CLI (metrics, reports). */
  const all = () => allOf(p);

  return {
    /** A CLI's report, from a turn just run. */
    report(backend: string, r: PlanReport): void {
      const before = current(backend);
      const row = toRow(backend, r, before, now());
      states.set(backend, row);
      try {
        o.store.save(row);
      } catch (err) {
        o.logger.warn({ event: 'plan_save_failed', backend, err }, 'could not save the plan state');
      }
      if (o.reported?.hasSubscribers) o.reported.publish({ scope: backend, row } satisfies PlanReported);
      logReport(o.logger, warned, { backend, r, before, row }, now());
    },

    /** Why a request for this backend is answered without its CLI, if it is. */
    refusal(backend: string, overage: OveragePolicy): ProxyError | undefined {
      const s = current(backend);
      return s && refusalOf(backend, s, overage, now());
    },

    /** The last-known state as response headers (none when unknown). */
    headers(backend: string): Record<string, string> {
      const s = current(backend);
      return s ? toHeaders(s) : {};
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
