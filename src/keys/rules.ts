import { MACHINE_LOGIN } from '../store/index.js';
import { KEY_NAME, type Role, type Store } from '../store/index.js';

// The rules of a key's settings, one place for both doors that change keys: `olp keys` (flags) and
// `/olp/keys` (JSON). Each door turns its own input into values and checks them here.

/** A broken rule; `field` names it as the JSON API does (`policy.dailyTokens`), so each door can say it its way. */
export class KeyRuleError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'KeyRuleError';
  }
}

export const ROLES = ['owner', 'member'] as const satisfies readonly Role[];

/** `overage`: may draw on the plan's paid extra usage (null: the role's default). */
export const OVERAGES = ['allow', 'deny'] as const;

/** The policy's limits and the `olp keys` flag that sets each. */
export const LIMIT_FLAGS = {
  concurrency: 'concurrency',
  rpm: 'rpm',
  dailyTokens: 'daily-tokens',
  monthlyTokens: 'monthly-tokens',
} as const;

/** A limit: a whole number from 1 (null, where it is given, means none). */
export function isLimit(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1;
}

/** A models list as `--models` takes it: entries trimmed, empty ones dropped; `all` or `*` alone: every model. */
export function toModels(entries: readonly string[]): string[] | null {
  const list = entries.map((s) => s.trim()).filter(Boolean);
  return list.length === 1 && (list[0] === 'all' || list[0] === '*') ? null : list;
}

/** An expiry given as a date: ISO 8601 (anything Date.parse reads), normalised; undefined if it is no date. */
export function toExpiryTime(raw: string): string | undefined {
  const t = Date.parse(raw);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** A key's login: one olp has (`olp logins`), or `machine`/null for the machine's own (null). */
export function toLoginName(store: Store, raw: string | null): string | null {
  if (raw === null || raw === MACHINE_LOGIN) return null;
  if (!store.logins.get(raw))
    throw new KeyRuleError(
      `there is no login named '${raw}' (olp logins list shows them; add one with: olp logins add ${raw} ` +
        '--claude, or --codex)',
      'login',
    );
  return raw;
}

/** A new key's name: KEY_NAME's characters, and no active key has it. */
export function checkNewName(store: Store, name: string): void {
  if (!KEY_NAME.test(name))
    throw new KeyRuleError(`invalid key name '${name}': use 1-64 letters, digits, '.', '_' or '-'`, 'name');
  if (store.keys.get(name)) throw new KeyRuleError(`a key named '${name}' already exists`, 'name');
}

/** The role of a new key given none: the first active key is the owner, every later one a member. */
export function defaultRole(store: Store): Role {
  return store.keys.activeCount() === 0 ? 'owner' : 'member';
}
