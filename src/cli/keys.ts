import { budgetPeriods } from '../admit/index.js';
import {
  isLimit,
  LIMIT_FLAGS,
  OVERAGES,
  ROLES,
  runCreateKey,
  runRevokeKey,
  runRotateKey,
  runUpdateKey,
  toExpiryTime,
  toLoginName,
  toModels,
} from '../keys/index.js';
import { MACHINE_LOGIN } from '../store/index.js';
import type { KeyRecord, Policy, Role, Store } from '../store/index.js';
import { overagePolicy } from '../plan/index.js';
import { printable, toColumns } from './output.js';
import { UsageError } from './usage-error.js';

export { KEY_FLAGS, keysHelp } from './keys-help.js';
export { UsageError };

type Values = Record<string, string | boolean | undefined>;

/** Who `olp keys` changes are recorded as (an owner key's changes through `/olp/keys` carry its name). */
const CLI_ACTOR = 'cli';

function limit(flag: string, raw: string | boolean | undefined): number | null | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  if (raw === 'none') return null;
  if (!/^\d+$/.test(raw) || !isLimit(Number(raw)))
    throw new UsageError(`--${flag} must be a positive integer or 'none', not '${raw}'`);
  return Number(raw);
}

function expiry(raw: string | boolean | undefined, now: number): string | null | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  if (raw === 'never' || raw === 'none') return null;
  const rel = /^(\d+)([dhm])$/.exec(raw);
  if (rel)
    return new Date(
      now + Number(rel[1]) * { d: 86400_000, h: 3600_000, m: 60_000 }[rel[2] as 'd' | 'h' | 'm'],
    ).toISOString();
  const at = toExpiryTime(raw);
  if (at === undefined)
    throw new UsageError(`--expires must be an ISO date, a duration like 30d, or 'never', not '${raw}'`);
  return at;
}

/** The policy fields a command line sets (absent flags leave a field as it is). */
export function toPolicyPatch(values: Values, now = Date.now()): Partial<Policy> {
  const patch: Partial<Policy> = {};
  if (typeof values.models === 'string') patch.models = toModels(values.models.split(','));
  const set = <K extends keyof Policy>(key: K, value: Policy[K] | undefined) => {
    if (value !== undefined) patch[key] = value;
  };
  for (const [field, flag] of Object.entries(LIMIT_FLAGS) as [keyof typeof LIMIT_FLAGS, string][])
    set(field, limit(flag, values[flag]));
  set('expiresAt', expiry(values.expires, now));
  if (values.overage !== undefined) {
    const overage = OVERAGES.find((o) => o === values.overage);
    if (!overage && values.overage !== 'default')
      throw new UsageError(`--overage must be allow, deny or default, not '${String(values.overage)}'`);
    patch.overage = overage ?? null;
  }
  if (values.enable && values.disable) throw new UsageError('--enable and --disable contradict each other');
  if (values.enable) patch.enabled = true;
  if (values.disable) patch.enabled = false;
  return patch;
}

function toRole(raw: string | boolean | undefined): Role | undefined {
  if (raw === undefined) return undefined;
  const role = ROLES.find((r) => r === raw);
  if (!role) throw new UsageError(`--role must be owner or member, not '${String(raw)}'`);
  return role;
}

/** `--login NAME`: a login olp has, or `machine` (null: the machine's own); undefined when not given. */
function toLogin(store: Store, raw: string | boolean | undefined): string | null | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  return toLoginName(store, raw);
}

const show = (n: number | null) => (n === null ? '-' : String(n));

function status(k: KeyRecord): string {
  if (k.revokedAt) return `revoked ${k.revokedAt.slice(0, 10)}`;
  if (k.policy.expiresAt && Date.parse(k.policy.expiresAt) <= Date.now()) return 'expired';
  return k.policy.enabled ? 'active' : 'disabled';
}

/** Rows of cells as aligned columns, each cell made printable. */
export function table(cells: string[][]): string {
  return toColumns(cells.map((r) => r.map(printable)));
}

function describeKey(store: Store, k: KeyRecord): string {
  const { day, month } = budgetPeriods(Date.now());
  const p = k.policy;
  return table([
    ['name', k.name],
    ['role', k.role],
    ['token', `${k.hint}…`],
    ['status', status(k)],
    ['login', k.login ?? MACHINE_LOGIN],
    ['created', k.createdAt],
    ['expires', p.expiresAt ?? 'never'],
    ['models', p.models ? p.models.join(', ') : 'all'],
    ['concurrency', show(p.concurrency)],
    ['requests/min', show(p.rpm)],
    ['extra usage', `${overagePolicy(k)}${p.overage === null ? ` (${k.role} default)` : ''}`],
    ['daily tokens', `${store.usage.tokensSince(k.id, day.start)} used of ${show(p.dailyTokens)}`],
    ['monthly tokens', `${store.usage.tokensSince(k.id, month.start)} used of ${show(p.monthlyTokens)}`],
  ]);
}

/** `olp keys add NAME`: the token to stdout, the rest to stderr. */
function addKey(store: Store, n: string, values: Values, out: (s: string) => void, err: (s: string) => void): number {
  const { key, token } = runCreateKey(store, CLI_ACTOR, n, {
    role: toRole(values.role),
    policy: toPolicyPatch(values),
    login: toLogin(store, values.login),
  });
  const on = key.login === null ? '' : ` on the login '${key.login}'`;
  // The vendors' terms forbid making one account available to others: say so where it happens.
  if (key.role === 'member' && key.login === null)
    err(
      `Note: '${key.name}' runs on this machine's own CLI login. If it is someone else's key, give them a ` +
        `login of their own: olp logins add ${key.name} --claude (or --codex), ` +
        `then olp keys set ${key.name} --login ${key.name}.\n`,
    );
  err(`Created ${key.role} key '${key.name}'${on}. The token is shown only now; store it safely:\n`);
  out(`${token}\n`);
  return 0;
}

/** `olp keys list`. */
function listText(store: Store): string {
  const rows = store.keys.list();
  if (rows.length === 0) return 'no keys (create one with: olp keys add NAME)\n';
  const head = ['NAME', 'ROLE', 'TOKEN', 'MODELS', 'CONC', 'RPM', 'DAILY', 'MONTHLY', 'EXPIRES', 'LOGIN', 'STATUS'];
  return table([
    head,
    ...rows.map((k) => [
      k.name,
      k.role,
      `${k.hint}…`,
      k.policy.models?.join(',') ?? 'all',
      show(k.policy.concurrency),
      show(k.policy.rpm),
      show(k.policy.dailyTokens),
      show(k.policy.monthlyTokens),
      k.policy.expiresAt?.slice(0, 10) ?? '-',
      k.login ?? MACHINE_LOGIN,
      status(k),
    ]),
  ]);
}

/** `olp keys …`: returns the exit code; writes to the given streams. */
export function runKeys(
  store: Store,
  sub: string | undefined,
  positionals: string[],
  values: Values,
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  const name = positionals[0];
  const needName = () => {
    if (!name || positionals.length > 1) throw new UsageError(`usage: olp keys ${sub} NAME`);
    return name;
  };
  switch (sub) {
    case 'add':
      return addKey(store, needName(), values, out, err);
    case 'set': {
      const n = needName();
      const role = toRole(values.role);
      const patch = toPolicyPatch(values);
      const login = toLogin(store, values.login);
      if (!role && Object.keys(patch).length === 0 && login === undefined)
        throw new UsageError('olp keys set: nothing to change (give --role, --login or a policy flag)');
      out(describeKey(store, runUpdateKey(store, CLI_ACTOR, n, { role, policy: patch, login }).key));
      return 0;
    }
    case 'show': {
      const key = store.keys.get(needName());
      if (!key) {
        err(`olp: no active key named '${name}'\n`);
        return 1;
      }
      out(describeKey(store, key));
      return 0;
    }
    case 'list':
      out(listText(store));
      return 0;
    case 'rotate': {
      const { token } = runRotateKey(store, CLI_ACTOR, needName());
      err(`Rotated key '${name}': the old token no longer works. The new token is shown only now:\n`);
      out(`${token}\n`);
      return 0;
    }
    case 'revoke': {
      if (!runRevokeKey(store, CLI_ACTOR, needName())) {
        err(`olp: no active key named '${name}'\n`);
        return 1;
      }
      out(`revoked key '${name}'\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown keys command '${sub ?? ''}' (add, set, show, list, rotate, revoke)`);
  }
}
