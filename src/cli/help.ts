import { FIELDS, type ConfigKey } from '../config/index.js';
import { DEBUG_ROW, HELP_ROW, toOptionLines } from './option-lines.js';

/** The options every command takes: the last lines of each command's options. */
export const COMMON_OPTIONS = `  --state-dir DIR      the state directory (default ~/.olp) [OLP_STATE_DIR]
  --log-level debug    also print the stack trace of an error [OLP_LOG_LEVEL]
  -h, --help           show this help`;

const ALL_KEYS = Object.keys(FIELDS) as ConfigKey[];
const hasFlag = (k: ConfigKey) => 'flag' in FIELDS[k];

export const MAIN_HELP = `olp: an OpenAI-compatible proxy that answers with the coding-agent CLIs you are logged into

Usage: olp COMMAND [options]

Run the proxy:
  serve        start the proxy; prints its base URL, then which CLIs will answer
  doctor       check the CLIs (installed, version, login), the state dir and the port
  service      run olp serve as a service (systemd user unit, launchd agent): install, status, logs

Manage it (works while olp serve runs):
  keys         API keys and their limits: add, set, show, list, rotate, revoke
  logins       members' own CLI logins for their keys: add, rotate, list, status, remove
  usage        who used how much of what; export, prune
  sessions     the CLI sessions kept per key: list, rotate
  responses    stored Responses API responses: list, prune

More than one machine:
  front        the config of a reverse proxy in front of several olp instances: nginx, prometheus

Record and replay CLI calls:
  recordings   status, record, replay, off, list, show, delete, prune

Help:
  olp COMMAND --help   a command's usage and options (olp serve --help lists every setting)
  olp --version        olp's version (also: olp version)

Options:
${COMMON_OPTIONS}
`;

export const SERVE_HELP = `Usage: olp serve [options]

Starts the proxy. Its first line on stdout is the base URL (http://127.0.0.1:8787/v1); stderr then
says which CLIs will answer and what to do next, followed by the log, one line a record
(--log-format json: JSON lines only). One olp serve runs per state dir: a second one exits at once
naming the first. Stop it with Ctrl-C or SIGTERM: requests in flight get --shutdown-grace seconds.

Options (each also settable as the OLP_* variable in brackets, or in <state-dir>/config.json):
${toOptionLines(ALL_KEYS.filter(hasFlag), [DEBUG_ROW, HELP_ROW])}

Settings without a flag (environment or config.json):
${toOptionLines(ALL_KEYS.filter((k) => !hasFlag(k)))}
`;

/** The settings of olp serve that doctor checks. */
const DOCTOR_OPTIONS: Parameters<typeof toOptionLines>[0] = [
  'stateDir',
  'host',
  'port',
  'claudeBin',
  'codexBin',
  'claudeCredentials',
  'codexAuth',
  'claudePassEnv',
  'codexPassEnv',
  'statusTimeout',
];

export const DOCTOR_HELP = `Usage: olp doctor [options]

Checks what olp serve would use: each CLI (the binary, its version, its login), the state directory
(exists, mode, writable, or can be created) and the port, and prints a command that fixes each
problem. It creates nothing. Exit status: 0 when at least one CLI can answer, 1 otherwise.

Options (the settings of olp serve that doctor checks; each also an OLP_* variable or config.json):
${toOptionLines(DOCTOR_OPTIONS, [DEBUG_ROW, HELP_ROW])}
`;
