import type { Request, Response } from 'express';
import { invalidRequest, keyNotFound, ownKeyLockout } from '../errors/index.js';
import {
  KeyRuleError,
  parseKeyCreate,
  parseKeyUpdate,
  runCreateKey,
  runRevokeKey,
  runRotateKey,
  runUpdateKey,
  toLoginName,
  type KeyChange,
  type KeyChangeRequest,
} from '../keys/index.js';
import type { AdminAction, KeyRecord, Store } from '../store/index.js';
import { toKeyView } from './admin.js';
import { ctx } from './context.js';

// The owner's key management for the usage page: the same changes as `olp keys`, each one logged
// and recorded. Owner keys only (app.ts checks that before the body is read). Keys travel as
// bearer tokens, never cookies, so another site's page cannot make a browser send these.

/** A rule broken (a login olp lacks, a name in use) as the 400 naming its field. */
function withRules<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof KeyRuleError) throw invalidRequest(`${err.message}.`, err.field, 'invalid_request', err);
    throw err;
  }
}

/** The body's change with its login checked against the store. */
function toChange(store: Store, req: KeyChangeRequest): KeyChange {
  return {
    role: req.role,
    policy: req.policy,
    ...(req.login !== undefined ? { login: withRules(() => toLoginName(store, req.login ?? null)) } : {}),
  };
}

/** The active key the path names, or a 404. */
function target(store: Store, req: Request): KeyRecord {
  const raw = req.params.name;
  const name = typeof raw === 'string' ? raw : '';
  const key = store.keys.get(name);
  if (!key) throw keyNotFound(name);
  return key;
}

/**
 * How soon the calling key may set its own expiry: one due sooner would lock the page's owner out
 * as surely as an expiry now (2 s ahead was accepted, and the key died 2 s later).
 */
const OWN_EXPIRY_MIN_MS = 10 * 60_000;

/** Refuses a change that would take away the calling key's own access (the page would lock its owner out). */
function refuseLockout(callerId: string, key: KeyRecord, change: KeyChange, now = Date.now()): void {
  if (key.id !== callerId) return;
  if (change.role === 'member') throw ownKeyLockout('demote', 'role');
  if (change.policy?.enabled === false) throw ownKeyLockout('disable', 'policy.enabled');
  const expires = change.policy?.expiresAt;
  if (expires && Date.parse(expires) <= now) throw ownKeyLockout('expire', 'policy.expiresAt');
  if (expires && Date.parse(expires) < now + OWN_EXPIRY_MIN_MS)
    throw ownKeyLockout(`set an expiry less than ${OWN_EXPIRY_MIN_MS / 60_000} minutes away on`, 'policy.expiresAt');
}

/** One log line per change, as the store recorded it: who, what, which key, the fields set. */
export function logAction(res: Response, a: AdminAction): void {
  ctx(res).log.info(
    { event: 'admin_action', actor: a.actor, action: a.action, target: a.target, changes: a.changes },
    `${a.action} ${a.target}`,
  );
}

/** POST, PATCH, DELETE /olp/keys[/:name] and POST /olp/keys/:name/rotate. */
export function createKeyAdminRoutes(store: Store) {
  const caller = (res: Response) => ctx(res).principal!;
  return {
    create(req: Request, res: Response): void {
      const body = parseKeyCreate(req.body);
      const change = toChange(store, body);
      const { key, token, action } = withRules(() => runCreateKey(store, caller(res).name, body.name, change));
      logAction(res, action);
      res.status(201).json({ key: toKeyView(store, key), token });
    },
    update(req: Request, res: Response): void {
      const key = target(store, req);
      const change = toChange(store, parseKeyUpdate(req.body));
      refuseLockout(caller(res).keyId, key, change);
      const done = runUpdateKey(store, caller(res).name, key.name, change);
      logAction(res, done.action);
      res.json({ key: toKeyView(store, done.key) });
    },
    rotate(req: Request, res: Response): void {
      const key = target(store, req);
      const { token, action } = runRotateKey(store, caller(res).name, key.name);
      logAction(res, action);
      res.json({ key: toKeyView(store, store.keys.get(key.name) ?? key), token });
    },
    revoke(req: Request, res: Response): void {
      const key = target(store, req);
      if (key.id === caller(res).keyId) throw ownKeyLockout('revoke', null);
      const action = runRevokeKey(store, caller(res).name, key.name);
      if (!action) throw keyNotFound(key.name);
      logAction(res, action);
      res.json({ name: key.name, revoked: true });
    },
  };
}

/** `?limit=`: 1 to 500 changes, 50 when absent. */
function limitOf(req: Request): number {
  const raw = req.query.limit;
  if (raw === undefined) return 50;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 500))
    throw invalidRequest(
      `Invalid value for 'limit': expected a whole number from 1 to 500, got ${JSON.stringify(raw)}.`,
      'limit',
    );
  return n;
}

/** GET /olp/admin-actions?limit=50 (owner keys only): the latest changes to keys, newest first. */
export function createAdminActionsRoute(store: Store) {
  return (req: Request, res: Response): void => {
    res.json({ object: 'list', data: store.adminActions.latest(limitOf(req)) });
  };
}
