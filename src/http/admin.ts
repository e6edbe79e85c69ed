import { overagePolicy, type Plans } from '../plan/index.js';
import type { Request, Response } from 'express';
import { budgetPeriods } from '../admit/index.js';
import { ownerOnly } from '../errors/index.js';
import type { KeyRecord, Policy, Store } from '../store/index.js';
import { ctx } from './context.js';

/** A key as the owner endpoints show it: policy and usage, never token material beyond the hint. */
function toKeyView(store: Store, key: Pick<KeyRecord, 'id' | 'name' | 'role'> & { policy: Policy; hint?: string; createdAt?: string }) {
  const { day, month } = budgetPeriods(Date.now());
  return {
    name: key.name,
    role: key.role,
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
    res.json({ ...toKeyView(store, { id: p.keyId, name: p.name, role: p.role, policy: p.policy }), overage: overagePolicy(p), plan: plans?.view() ?? {} });
  };
}

/** GET /olp/keys: every active key with its policy and usage (owner keys only). */
export function createKeysRoute(store: Store) {
  return (_req: Request, res: Response): void => {
    if (ctx(res).principal!.role !== 'owner') throw ownerOnly();
    res.json({ object: 'list', data: store.keys.list().filter((k) => !k.revokedAt).map((k) => toKeyView(store, k)) });
  };
}
