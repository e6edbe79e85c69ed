import { COMMON_OPTIONS } from './help.js';

// `olp service`'s help and flags.

export const SERVICE_FLAGS = {
  print: { type: 'boolean' },
  platform: { type: 'string' },
  system: { type: 'boolean' },
  name: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  lines: { type: 'string', short: 'n' },
} as const;

export const SERVICE_HELP = `Usage: olp service install|status|logs|restart|uninstall [options]

Runs olp serve as a service of your user, started again when it fails: a systemd user unit on Linux
(~/.config/systemd/user/olp.service), a launchd agent on macOS (~/Library/LaunchAgents/dev.olp.plist,
its log in ~/Library/Logs/olp/olp.log). The unit runs this Node and this olp by their absolute paths,
with the PATH (and locale, proxies, CA bundles) of the shell you install from, so the CLIs are found
as they are now. Nothing secret is written into it. See docs/service.md.

Commands:
  olp service install [serve options]   write the unit with these olp serve options, enable and (re)start it
  olp service install --print           write the unit (or plist) to stdout instead; nothing is installed
  olp service status                    systemctl --user status olp / launchctl print
  olp service logs [-f] [-n N]          its log: journalctl --user -u olp / the log file
  olp service restart                   restart it (after an upgrade of olp: npm install -g ...)
  olp service uninstall                 stop it, disable it and remove the unit; the state dir is kept

Options:
  --name NAME          the service's name (default olp: olp.service, dev.olp); one per state dir and port
  --print              install: print the unit instead of installing it (for /etc/systemd/system, containers)
  --platform OS        with --print: linux (a systemd unit) or darwin (a launchd plist); default this machine's
  --system             with --print: a system-wide unit (User= you, WantedBy=multi-user.target), for
                       /etc/systemd/system/olp.service
  -f, --follow         logs: go on printing new lines
  -n, --lines N        logs: how many of the last lines (default 100)
  serve options        install: any of olp serve's (olp serve --help), e.g. --port 8787 --host 0.0.0.0

To keep it running after you log out, and start it at boot (Linux): loginctl enable-linger $USER

Options every command takes:
${COMMON_OPTIONS}
`;
