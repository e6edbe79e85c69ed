import { COMMON_OPTIONS } from './help.js';

// `olp keys`' help and flags.

const POLICY_FLAGS = `Policy flags (use 'none' to clear a limit):
  --role owner|member    owners also see every key (/olp/keys, /health details); the first key is an owner
  --models LIST          model ids or globs, comma separated ('all' for every model)
  --concurrency N        requests in flight at once
  --rpm N                requests per minute
  --daily-tokens N       prompt + completion tokens per UTC day
  --monthly-tokens N     prompt + completion tokens per UTC month
  --expires WHEN         an ISO date/time, a duration like 30d or 12h, or 'never'
  --overage allow|deny   may draw on the plan's paid extra usage once its included usage is
                         spent ('default': owners may, members may not)
  --login NAME           whose CLI logins answer the key: a login of olp logins, or 'machine'
                         (the default: the CLIs' own login on this machine)`;

const KEY_COMMANDS: Record<string, { usage: string; what: string; policy?: boolean }> = {
  add: {
    usage: 'olp keys add NAME [policy flags]',
    what: 'create a key; the token is printed once, alone on the last line of stdout',
    policy: true,
  },
  set: {
    usage: 'olp keys set NAME [policy flags] [--enable | --disable]',
    what: 'change a key; a running server applies it at once',
    policy: true,
  },
  show: { usage: 'olp keys show NAME', what: "a key's policy and usage" },
  list: { usage: 'olp keys list', what: 'all keys (names, roles, limits, token hints; never tokens)' },
  rotate: { usage: 'olp keys rotate NAME', what: 'a new token (printed once); the old one stops working at once' },
  revoke: { usage: 'olp keys revoke NAME', what: 'revoke a key at once' },
};

/** `olp keys --help`, or one subcommand's (`olp keys add --help`). */
export function keysHelp(sub: string | undefined): string {
  const one = sub !== undefined ? KEY_COMMANDS[sub] : undefined;
  if (one) {
    const enable = sub === 'set' ? '  --enable, --disable    turn the key on or off\n' : '';
    const policy = one.policy ? `${POLICY_FLAGS}\n${enable}\n` : '';
    const what = `${one.what[0]!.toUpperCase()}${one.what.slice(1)}`;
    return `Usage: ${one.usage}\n\n${what}.\n\n${policy}Options:\n${COMMON_OPTIONS}\n`;
  }
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

/** The flags `olp keys` parses. */
export const KEY_FLAGS = {
  role: { type: 'string' },
  models: { type: 'string' },
  concurrency: { type: 'string' },
  rpm: { type: 'string' },
  'daily-tokens': { type: 'string' },
  'monthly-tokens': { type: 'string' },
  expires: { type: 'string' },
  overage: { type: 'string' },
  login: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
} as const;
