// The text of olp's service definitions: a systemd unit (Linux) and a launchd agent (macOS). Pure:
// what goes in them is decided in service-spec.ts, where they are written in service.ts.

/** What runs as the service, every path absolute; nothing secret (the unit and the plist are plain files). */
export interface ServiceSpec {
  /** The service's name: `olp` (olp.service, dev.olp), or the one given with --name. */
  name: string;
  /** The Node that runs olp (its absolute path at install time). */
  node: string;
  /** olp's entry, dist/src/cli/main.js, as an absolute path. */
  entry: string;
  /** `serve` and its flags. */
  args: readonly string[];
  /** The variables set for it: PATH and the rest captured at install time, OLP_STATE_DIR. */
  env: Readonly<Record<string, string>>;
  /** Where its documentation is (a file: URL to the installed docs/service.md). */
  docs: string;
  /** A system-wide unit (`--system`): run as this user, started at boot. */
  systemUser?: string;
  /** macOS: where its stdout and stderr go. */
  logFile?: string;
  /** macOS: its working directory (the user's home). */
  home?: string;
}

/** Seconds systemd (RestartSec) and launchd (ThrottleInterval) wait before starting a crashed olp again. */
export const RESTART_SECONDS = 5;

/** The launchd label of a service name: dev.olp for olp, dev.olp.NAME for others. */
export function toLaunchdLabel(name: string): string {
  return name === 'olp' ? 'dev.olp' : `dev.olp.${name}`;
}

/**
 * One word of ExecStart= as systemd reads it: quoted when it has a space or a quote, `%` (a
 * specifier) and `$` (a variable) doubled so they stay as they are (systemd.service, "Command lines").
 */
export function toSystemdWord(s: string): string {
  const escaped = s.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[\w@%$+=:,./-]+$/.test(escaped) ? escaped : `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** One Environment= line: the assignment quoted as one word (specifiers doubled; `$` is not expanded there). */
function toEnvironmentLine(name: string, value: string): string {
  const assignment = `${name}=${value}`.replace(/%/g, '%%');
  return /^[\w@+=:,./-]+$/.test(assignment)
    ? `Environment=${assignment}`
    : `Environment="${assignment.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The systemd unit: a user unit, or with `systemUser` one for /etc/systemd/system. */
export function toSystemdUnit(spec: ServiceSpec): string {
  const command = [spec.node, spec.entry, ...spec.args].map(toSystemdWord).join(' ');
  const system = spec.systemUser !== undefined;
  return [
    '# olp as a service: written by `olp service install`; `olp service uninstall` removes it.',
    `# Add settings with \`systemctl${system ? '' : ' --user'} edit ${spec.name}\` (a drop-in), not here: an install rewrites this file.`,
    '[Unit]',
    'Description=olp, the OpenAI-compatible proxy for the coding-agent CLIs you are logged into',
    `Documentation=${spec.docs}`,
    ...(system ? ['Wants=network-online.target', 'After=network-online.target'] : []),
    '',
    '[Service]',
    'Type=exec',
    ...(system ? [`User=${spec.systemUser}`] : []),
    `ExecStart=${command}`,
    ...Object.entries(spec.env).map(([k, v]) => toEnvironmentLine(k, v)),
    'Restart=on-failure',
    `RestartSec=${RESTART_SECONDS}`,
    // SIGTERM to olp alone: it lets requests in flight finish (--shutdown-grace), then stops its CLIs;
    // whatever is left when TimeoutStopSec runs out is killed.
    'KillMode=mixed',
    'UMask=0077',
    '',
    '[Install]',
    `WantedBy=${system ? 'multi-user.target' : 'default.target'}`,
    '',
  ].join('\n');
}

/** Text as XML character data. */
export function toXmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const key = (k: string) => `  <key>${toXmlText(k)}</key>`;
const str = (s: string, indent = '  ') => `${indent}<string>${toXmlText(s)}</string>`;

/** The launchd agent (~/Library/LaunchAgents): started at login, started again when it fails. */
export function toLaunchdPlist(spec: ServiceSpec): string {
  const log = spec.logFile ?? '/dev/null';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<!-- olp as a service: written by `olp service install`; `olp service uninstall` removes it. -->',
    '<plist version="1.0">',
    '<dict>',
    key('Label'),
    str(toLaunchdLabel(spec.name)),
    key('ProgramArguments'),
    '  <array>',
    ...[spec.node, spec.entry, ...spec.args].map((a) => str(a, '    ')),
    '  </array>',
    key('EnvironmentVariables'),
    '  <dict>',
    ...Object.entries(spec.env).flatMap(([k, v]) => [`  ${key(k)}`, str(v, '    ')]),
    '  </dict>',
    ...(spec.home ? [key('WorkingDirectory'), str(spec.home)] : []),
    key('RunAtLoad'),
    '  <true/>',
    // Started again when it exits with a failure or is killed; not after a clean stop.
    key('KeepAlive'),
    '  <dict>',
    `  ${key('SuccessfulExit')}`,
    '    <false/>',
    '  </dict>',
    key('ThrottleInterval'),
    `  <integer>${RESTART_SECONDS}</integer>`,
    key('Umask'),
    `  <integer>${0o077}</integer>`,
    key('StandardOutPath'),
    str(log),
    key('StandardErrorPath'),
    str(log),
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
