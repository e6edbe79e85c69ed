import { COMMON_OPTIONS } from './help.js';

// `olp logins`' help and flags.

const CLI_FLAGS = `Credential flags:
  --claude               claude: a setup token. At a terminal, olp runs \`claude setup-token\` (sign
                         in in the browser), then asks you to paste the token it printed; with stdin
                         not a terminal (or --stdin) the token is read from stdin, e.g. one made on
                         the member's own machine: olp logins add alice --claude < token.txt
  --codex                codex: by default \`codex login --device-auth\` (a code to enter at
                         https://auth.openai.com/codex/device, no browser needed on this machine)
  --api-key              codex: an OpenAI API key instead; claude: an Anthropic API key (sk-ant-api…)
                         instead of a setup token (runs get ANTHROPIC_API_KEY); read from stdin
                         (asked for at a terminal)
  --access-token         codex: an access token instead, read from stdin (asked for at a terminal)
  --stdin                claude: take a token made elsewhere, without running claude setup-token
                         (asked for at a terminal)`;

/** The CLIs `olp logins` runs: the ones olp serve would. */
const BIN_OPTIONS = `  --claude-bin PATH    the claude executable, as for olp serve [OLP_CLAUDE_BIN]
  --codex-bin PATH     the codex executable, as for olp serve [OLP_CODEX_BIN]
`;

const LOGIN_COMMANDS: Record<string, { usage: string; what: string; flags?: boolean; extra?: string }> = {
  add: {
    usage: 'olp logins add NAME --claude|--codex [--api-key|--access-token|--stdin]',
    what: "store a member's own claude and/or codex login (both flags: claude first)",
    flags: true,
    extra: BIN_OPTIONS,
  },
  rotate: {
    usage: 'olp logins rotate NAME --claude|--codex [--api-key|--access-token|--stdin]',
    what: 'replace one CLI credential of a login; the old one stays until the new one is checked',
    flags: true,
    extra: BIN_OPTIONS,
  },
  list: { usage: 'olp logins list', what: "the logins (the machine's own first): credentials, bound keys, plan" },
  status: {
    usage: 'olp logins status NAME',
    what:
      "a login's credentials (kinds and files, never contents), its keys and plan, and whether\n" +
      '      each CLI accepts its credential (exit 1 if not)',
    extra: BIN_OPTIONS,
  },
  remove: {
    usage: 'olp logins remove NAME [--claude|--codex]',
    what:
      "remove one CLI's credential, or the whole login; keys bound to it stay bound (and are\n" +
      '      refused until it is back)',
    extra: `  --claude, --codex      remove only that CLI's credential\n`,
  },
};

/** `olp logins --help`, or one subcommand's (`olp logins add --help`). */
export function loginsHelp(sub: string | undefined): string {
  const one = sub !== undefined ? LOGIN_COMMANDS[sub] : undefined;
  if (one) {
    const what = `${one.what[0]!.toUpperCase()}${one.what.slice(1).replace(/\n +/g, '\n')}`;
    const flags = one.flags ? `${CLI_FLAGS}\n\n` : '';
    return `Usage: ${one.usage}\n\n${what}.\n\n${flags}Options:\n${one.extra ?? ''}${COMMON_OPTIONS}\n`;
  }
  return `Usage: olp logins COMMAND [options]

Logins: a member's own CLI credentials, so that the requests of their keys (olp keys add KEY
--login NAME) run on their own subscription, not on this machine's login. A login holds a claude
setup token, a codex login, or both, as files under <state-dir>/logins/NAME/ (0600). 'machine'
names the CLIs' own login on this machine (keys without a login).

Commands:
${Object.values(LOGIN_COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.what}`)
  .join('\n')}

${CLI_FLAGS}

Options:
${COMMON_OPTIONS}

Run olp logins COMMAND --help for one command.
`;
}

/** The flags `olp logins` parses. */
export const LOGIN_FLAGS = {
  claude: { type: 'boolean' },
  codex: { type: 'boolean' },
  'api-key': { type: 'boolean' },
  'access-token': { type: 'boolean' },
  stdin: { type: 'boolean' },
} as const;
