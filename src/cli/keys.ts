import { budgetPeriods } from '../admit/index.js';
import type { KeyRecord, Policy, Role, Store } from '../store/index.js';
import { overagePolicy } from '../plan/index.js';
import { COMMON_OPTIONS } from './help.js';
import { printable } from './output.js';

/** Raised for bad command lines; main prints the reason and where the help is, and exits 2. */
export class UsageError extends Error {}

const POLICY_FLAGS = `Policy flags (use 'none' to clear a limit):
  --role owner|member    owners also see every key (/olp/keys, /health details); the first key is an owner
  --models LIST          model ids or globs, comma separated ('all' for every model)
  --concurrency N        requests in flight at once
  --rpm N                requests per minute
  --daily-tokens N       prompt + completion tokens per UTC day
  --monthly-tokens N     prompt + completion tokens per UTC month
  --expires WHEN         an ISO date/time, a duration like 30d or 12h, or 'never'
  --overage allow|deny   may draw on the plan's paid extra usage once its included usage is
                         spent ('default': owners may, members may not)`;

const KEY_COMMANDS: Record<string, { usage: string; what: string; policy?: boolean }> = {
  add: { usage: 'olp keys add NAME [policy flags]', what: 'create a key; the token is printed once, alone on the last line of stdout', policy: true },
  set: { usage: 'olp keys set NAME [policy flags] [--enable | --disable]', what: 'change a key; a running server applies it at once', policy: true },
  show: { usage: 'olp keys show NAME', what: "a key's policy and usage" },
  list: { usage: 'olp keys list', what: 'all keys (names, roles, limits, token hints; never tokens)' },
  rotate: { usage: 'olp keys rotate NAME', what: 'a new token (printed once); the old one stops working at once' },
  revoke: { usage: 'olp keys revoke NAME', what: 'revoke a key at once' },
};

/** `olp keys --help`, or one subcommand's (`olp keys add --help`). */
export function keysHelp(sub: string | undefined): string {
  const one = sub !== undefined ? KEY_COMMANDS[sub] : undefined;
  if (one) return `Usage: ${one.usage}\n\n${one.what[0]!.toUpperCase()}${one.what.slice(1)}.\n\n${one.policy ? `${POLICY_FLAGS}\n${sub === 'set' ? '  --enable, --disable    turn the key on or off\n' : ''}\n` : ''}Options:\n${COMMON_OPTIONS}\n`;
  const width = Math.max(...Object.values(KEY_COMMANDS).map((c) => c.usage.length));
  return `Usage: olp keys COMMAND [options]

API keys: each client gets its own, with its own limits. Changes apply to a running server at once.

Commands:
${Object.values(KEY_COMMANDS)
  .map((c) => `  ${c.usage.padEnd(width)}  ${c.what}`)
  .join('\n')}

${POLICY_FLAGS}
  --enable, --disable    turn a key on or off (set)

Options:
${COMMON_OPTIONS}

Run olp keys COMMAND --help for one command.
`;
}

export const KEY_FLAGS = {
  role: { type: 'string' },
  models: { type: 'string' },
  concurrency: { type: 'string' },
  rpm: { type: 'string' },
  'daily-tokens': { type: 'string' },
  'monthly-tokens': { type: 'string' },
  expires: { type: 'string' },
  overage: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
} as const;

type Values = Record<string, string | boolean | undefined>;

function limit(flag: string, raw: string | boolean | undefined): number | null | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  if (raw === 'none') return null;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`--${flag} must be a positive integer or 'none', not '${raw}'`);
  return Number(raw);
}

function expiry(raw: string | boolean | undefined, now: number): string | null | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  if (raw === 'never' || raw === 'none') return null;
  const rel = /^(\d+)([dhm])$/.exec(raw);
  if (rel) return new Date(now + Number(rel[1]) * { d: 86400_000, h: 3600_000, m: 60_000 }[rel[2] as 'd' | 'h' | 'm']).toISOString();
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw new UsageError(`--expires must be an ISO date, a duration like 30d, or 'never', not '${raw}'`);
  return new Date(t).toISOString();
}

/** The policy fields a command line sets (absent flags leave a field as it is). */
export function toPolicyPatch(values: Values, now = Date.now()): Partial<Policy> {
  const patch: Partial<Policy> = {};
  if (typeof values.models === 'string') {
    const list = values.models.split(',').map((s) => s.trim()).filter(Boolean);
    patch.models = values.models === 'all' || values.models === '*' ? null : list;
  }
  const set = <K extends keyof Policy>(key: K, value: Policy[K] | undefined) => {
    if (value !== undefined) patch[key] = value;
  };
  set('concurrency', limit('concurrency', values.concurrency));
  set('rpm', limit('rpm', values.rpm));
  set('dailyTokens', limit('daily-tokens', values['daily-tokens']));
  set('monthlyTokens', limit('monthly-tokens', values['monthly-tokens']));
  set('expiresAt', expiry(values.expires, now));
  if (values.overage !== undefined) {
    if (values.overage !== 'allow' && values.overage !== 'deny' && values.overage !== 'default') throw new UsageError(`--overage must be allow, deny or default, not '${String(values.overage)}'`);
    patch.overage = values.overage === 'default' ? null : values.overage;
  }
  if (values.enable && values.disable) throw new UsageError('--enable and --disable contradict each other');
  if (values.enable) patch.enabled = true;
  if (values.disable) patch.enabled = false;
  return patch;
}

function toRole(raw: string | boolean | undefined): Role | undefined {
  if (raw === undefined) return undefined;
  if (raw !== 'owner' && raw !== 'member') throw new UsageError(`--role must be owner or member, not '${String(raw)}'`);
  return raw;
}

const show = (n: number | null) => (n === null ? '-' : String(n));

function status(k: KeyRecord): string {
  if (k.revokedAt) return `revoked ${k.revokedAt.slice(0, 10)}`;
  if (k.policy.expiresAt && Date.parse(k.policy.expiresAt) <= Date.now()) return 'expired';
  return k.policy.enabled ? 'active' : 'disabled';
}

function table(cells: string[][]): string {
  const rows = cells.map((r) => r.map(printable));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

function describeKey(store: Store, k: KeyRecord): string {
  const { day, month } = budgetPeriods(Date.now());
  const p = k.policy;
  return table([
    ['name', k.name],
    ['role', k.role],
    ['token', `${k.hint}…`],
    ['status', status(k)],
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

/** `olp keys …`: returns the exit code; writes to the given streams. */
export function runKeys(store: Store, sub: string | undefined, positionals: string[], values: Values, out: (s: string) => void, err: (s: string) => void): number {
  const name = positionals[0];
  const needName = () => {
    if (!name || positionals.length > 1) throw new UsageError(`usage: olp keys ${sub} NAME`);
    return name;
  };
  switch (sub) {
    case 'add': {
      const n = needName();
      const role = toRole(values.role) ?? (store.keys.activeCount() === 0 ? 'owner' : 'member');
      const { key, token } = store.keys.add(n, role, toPolicyPatch(values));
      err(`Created ${key.role} key '${key.name}'. The token is shown only now; store it safely:\n`);
      out(`${token}\n`);
      return 0;
    }
    case 'set': {
      const n = needName();
      const role = toRole(values.role);
      const patch = toPolicyPatch(values);
      if (!role && Object.keys(patch).length === 0) throw new UsageError('olp keys set: nothing to change (give --role or a policy flag)');
      out(describeKey(store, store.keys.update(n, { ...(role ? { role } : {}), policy: patch })));
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
    case 'list': {
      const rows = store.keys.list();
      if (rows.length === 0) {
        out('no keys (create one with: olp keys add NAME)\n');
        return 0;
      }
      const head = ['NAME', 'ROLE', 'TOKEN', 'MODELS', 'CONC', 'RPM', 'DAILY', 'MONTHLY', 'EXPIRES', 'STATUS'];
      out(
        table([
          head,
          ...rows.map((k) => [k.name, k.role, `${k.hint}…`, k.policy.models?.join(',') ?? 'all', show(k.policy.concurrency), show(k.policy.rpm), show(k.policy.dailyTokens), show(k.policy.monthlyTokens), k.policy.expiresAt?.slice(0, 10) ?? '-', status(k)]),
        ]),
      );
      return 0;
    }
    case 'rotate': {
      const token = store.keys.rotate(needName());
      err(`Rotated key '${name}': the old token no longer works. The new token is shown only now:\n`);
      out(`${token}\n`);
      return 0;
    }
    case 'revoke': {
      if (!store.keys.revoke(needName())) {
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
