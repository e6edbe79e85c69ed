import { MACHINE_LOGIN } from '../store/index.js';
import type { AdminAction, KeyRecord, Policy, Role, Store } from '../store/index.js';
import { checkNewName, defaultRole } from './rules.js';

/** What a change to a key sets (absent fields stay as they are); the login already checked. */
export interface KeyChange {
  role?: Role | undefined;
  /** null: the machine's own. */
  login?: string | null | undefined;
  policy?: Partial<Policy> | undefined;
}

/** The fields a change sets, as recorded: never a token, its hash or its hint. */
function toChanges(c: KeyChange): Record<string, unknown> {
  return {
    ...(c.role !== undefined ? { role: c.role } : {}),
    ...(c.login !== undefined ? { login: c.login ?? MACHINE_LOGIN } : {}),
    ...(c.policy && Object.keys(c.policy).length > 0 ? { policy: c.policy } : {}),
  };
}

/** Adds a key (role by `defaultRole` when not given) and records it; the token is returned once. */
export function runCreateKey(
  store: Store,
  actor: string,
  name: string,
  change: KeyChange,
): { key: KeyRecord; token: string; action: AdminAction } {
  checkNewName(store, name);
  const role = change.role ?? defaultRole(store);
  const { key, token } = store.keys.add(name, role, change.policy ?? {}, change.login ?? null);
  const action = store.adminActions.record({
    actor,
    action: 'key_created',
    target: name,
    changes: toChanges({ ...change, role, login: key.login }),
  });
  return { key, token, action };
}

/** Changes an active key's role, login or policy (at once, for its next request) and records it. */
export function runUpdateKey(
  store: Store,
  actor: string,
  name: string,
  change: KeyChange,
): { key: KeyRecord; action: AdminAction } {
  const key = store.keys.update(name, {
    ...(change.role ? { role: change.role } : {}),
    policy: change.policy ?? {},
    ...(change.login !== undefined ? { login: change.login } : {}),
  });
  const action = store.adminActions.record({ actor, action: 'key_updated', target: name, changes: toChanges(change) });
  return { key, action };
}

/** Gives an active key a new token (the old one stops at once) and records it. */
export function runRotateKey(store: Store, actor: string, name: string): { token: string; action: AdminAction } {
  const token = store.keys.rotate(name);
  return { token, action: store.adminActions.record({ actor, action: 'key_rotated', target: name, changes: {} }) };
}

/** Revokes the active key with this name and records it; undefined when there is none. */
export function runRevokeKey(store: Store, actor: string, name: string): AdminAction | undefined {
  if (!store.keys.revoke(name)) return undefined;
  return store.adminActions.record({ actor, action: 'key_revoked', target: name, changes: {} });
}
