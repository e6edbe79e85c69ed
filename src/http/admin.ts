import { MACHINE_LOGIN } from '../logins/index.js';
import { overagePolicy, type Plans } from '../plan/index.js';
import type { Request, Response } from 'express';
import { budgetPeriods } from '../admit/index.js';
import { invalidRequest, ownerOnly } from '../errors/index.js';
import type { KeyRecord, Policy, Store } from '../store/index.js';
import { ctx } from './context.js';

/**
 * The CLIs whose credential of the key's login its provider refused on a run, with when and what
 * the CLI said (never a secret): the login needs renewing. Absent for the machine's own login.
 */
function refusedView(store: Store, login: string | null) {
  const r = login === null ? undefined : store.logins.get(login)?.refused;
  if (!r || (!r.claude && !r.codex)) return {};
  return { login_refused: { ...(r.claude ? { claude: r.claude } : {}), ...(r.codex ? { codex: r.codex } : {}) } };
}

/**
 * Whose login serves a key, in one word for the owner's tables: `refused` (its login has a refused
 * note), `machine` (none), `own` (bound to this key only) or `shared` (bound to several keys).
 */
export function toLoginState(store: Store, login: string | null): 'own' | 'shared' | 'machine' | 'refused' {
  if (login === null) return 'machine';
  const r = store.logins.get(login)?.refused;
  if (r && (r.claude || r.codex)) return 'refused';
  return store.logins.keysOf(login).length > 1 ? 'shared' : 'own';
}

/** A key as the owner endpoints show it: policy and usage, never token material beyond the hint. */
export function toKeyView(
  store: Store,
  key: Pick<KeyRecord, 'id' | 'name' | 'role' | 'login'> & { policy: Policy; hint?: string; createdAt?: string },
) {
  const { day, month } = budgetPeriods(Date.now());
  return {
    name: key.name,
    role: key.role,
    // Whose CLI login serves the key (`olp logins`).
    login: key.login ?? MACHINE_LOGIN,
    loginState: toLoginState(store, key.login),
    ...refusedView(store, key.login),
    ...(key.hint ? { token_hint: `${key.hint}…` } : {}),
    ...(key.createdAt ? { created_at: key.createdAt } : {}),
    policy: key.policy,
    usage: {
      tokens_today: store.usage.tokensSince(key.id, day.start),
      tokens_this_month: store.usage.tokensSince(key.id, month.start),
    },
  };
}

/** GET /olp/me: the calling key's own policy and usage (any key), and the logins' plan states. */
export function createMeRoute(store: Store, plans?: Plans) {
  return (_req: Request, res: Response): void => {
    const p = ctx(res).principal!;
    res.json({
      ...toKeyView(store, { id: p.keyId, name: p.name, role: p.role, policy: p.policy, login: p.login }),
      overage: overagePolicy(p),
      plan: plans?.view(p.login) ?? {},
    });
  };
}

/** GET /olp/keys: every active key with its policy and usage (owner keys only). */
export function createKeysRoute(store: Store) {
  return (_req: Request, res: Response): void => {
    if (ctx(res).principal!.role !== 'owner') throw ownerOnly();
    res.json({
      object: 'list',
      data: store.keys
        .list()
        .filter((k) => !k.revokedAt)
        .map((k) => toKeyView(store, k)),
    });
  };
}

/** `?days=`: 1 to 366 whole days, 30 when absent. */
function daysOf(req: Request): number {
  const raw = req.query.days;
  if (raw === undefined) return 30;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 366))
    throw invalidRequest(
      `Invalid value for 'days': expected a whole number of days from 1 to 366, got ${JSON.stringify(raw)}.`,
      'days',
    );
  return n;
}

/** The start of the UTC day `days - 1` days before today: the window of `days` days ending today. */
function sinceDays(days: number, now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - (days - 1) * 86_400_000;
}

/** A key's totals today and this month against its budgets. */
function budgetView(store: Store, key: { id: string; policy: Policy }, now: number) {
  const { day, month } = budgetPeriods(now);
  const count = (since: number) => store.usage.summarize({ scope: { keyId: key.id }, sinceMs: since }, 'key')[0];
  const today = count(day.start);
  const thisMonth = count(month.start);
  return {
    today: {
      tokens: store.usage.tokensSince(key.id, day.start),
      requests: today?.requests ?? 0,
      budget: key.policy.dailyTokens,
    },
    month: {
      tokens: store.usage.tokensSince(key.id, month.start),
      requests: thisMonth?.requests ?? 0,
      budget: key.policy.monthlyTokens,
    },
  };
}

/**
 * GET /olp/me/usage?days=30: the calling key's bill (any key): today and this month against its
 * budgets, per-day and per-model rows, its sessions, and the logins' plan states.
 */
export function createMyUsageRoute(store: Store, plans?: Plans) {
  return (req: Request, res: Response): void => {
    const p = ctx(res).principal!;
    const days = daysOf(req);
    const now = Date.now();
    const rows = store.usage
      .daily({ scope: { keyId: p.keyId }, sinceMs: sinceDays(days, now) })
      .map(({ key: _key, ...r }) => r);
    const sessions = store.slots
      .list()
      .filter((s) => s.keyId === p.keyId && s.sessionId !== null)
      .map((s) => ({
        backend: s.backend,
        slot: s.slot,
        started_at: s.createdAt === null ? null : new Date(s.createdAt).toISOString(),
        last_used_at: s.lastUsedAt === null ? null : new Date(s.lastUsedAt).toISOString(),
        turns: s.turns,
      }));
    res.setHeader('cache-control', 'no-store');
    res.json({
      object: 'usage',
      key: p.name,
      role: p.role,
      login: p.login ?? MACHINE_LOGIN,
      ...refusedView(store, p.login),
      days,
      ...budgetView(store, { id: p.keyId, policy: p.policy }, now),
      rows,
      // Within the same days: successful requests per model, failures by code, recent conversations.
      ...store.usage.breakdown({ scope: { keyId: p.keyId }, sinceMs: sinceDays(days, now) }, 10),
      sessions,
      plan: plans?.view(p.login) ?? {},
    });
  };
}

/** GET /olp/usage?days=30 (owner keys only): every active key's totals and budgets, and the per-day rows of all. */
export function createUsageRoute(store: Store, plans?: Plans) {
  return (req: Request, res: Response): void => {
    if (ctx(res).principal!.role !== 'owner') throw ownerOnly();
    const days = daysOf(req);
    const now = Date.now();
    const keys = store.keys
      .list()
      .filter((k) => !k.revokedAt)
      .map((k) => ({
        name: k.name,
        role: k.role,
        login: k.login ?? MACHINE_LOGIN,
        loginState: toLoginState(store, k.login),
        ...refusedView(store, k.login),
        enabled: k.policy.enabled,
        ...budgetView(store, k, now),
      }));
    res.setHeader('cache-control', 'no-store');
    res.json({
      object: 'usage',
      days,
      keys,
      rows: store.usage.daily({ scope: { all: true }, sinceMs: sinceDays(days, now) }),
      // Every login's plan window by CLI (the machine's own login as MACHINE_LOGIN).
      plans: (plans?.all() ?? []).map((p) => ({ backend: p.backend, login: p.login ?? MACHINE_LOGIN, ...p.view })),
    });
  };
}
