import { dirname } from 'node:path';
import type { ServicePlatform } from './service-spec.js';
import { toLaunchdLabel } from './service-text.js';

// What each `olp service` action does, as a list of steps: the file written or removed and the
// systemctl, journalctl, launchctl or tail commands run. Pure; service.ts carries them out.

export type ServiceAction = 'install' | 'status' | 'logs' | 'restart' | 'uninstall';

export type ServiceStep =
  | { kind: 'write'; file: string; text: string }
  | { kind: 'mkdir'; dir: string }
  | { kind: 'remove'; file: string }
  /** `mayFail`: its failure does not stop the steps after it (unloading what may not be loaded). */
  | { kind: 'run'; command: string; args: string[]; mayFail?: boolean };

/** The service as the steps need it. */
export interface ServiceTarget {
  name: string;
  /** The unit or plist file. */
  file: string;
  /** Its text (install). */
  text?: string;
  /** macOS: the log file. */
  logFile?: string;
  uid: number;
  /** logs: how many lines, and whether to go on printing new ones. */
  lines: number;
  follow: boolean;
}

const run = (command: string, args: string[], mayFail = false): ServiceStep =>
  mayFail ? { kind: 'run', command, args, mayFail } : { kind: 'run', command, args };

/** systemd: a user unit, `systemctl --user` and the user's journal. */
function toSystemdSteps(action: ServiceAction, t: ServiceTarget): ServiceStep[] {
  const unit = `${t.name}.service`;
  const systemctl = (...args: string[]) => run('systemctl', ['--user', ...args]);
  switch (action) {
    case 'install':
      // restart, not start: a service already running (an upgrade, new flags) comes up on the new unit.
      return [
        { kind: 'mkdir', dir: dirname(t.file) },
        { kind: 'write', file: t.file, text: t.text ?? '' },
        systemctl('daemon-reload'),
        systemctl('enable', unit),
        systemctl('restart', unit),
      ];
    case 'status':
      return [systemctl('status', '--no-pager', '--full', unit)];
    case 'logs':
      return [
        run('journalctl', ['--user', '-u', unit, '--no-pager', '-n', String(t.lines), ...(t.follow ? ['-f'] : [])]),
      ];
    case 'restart':
      return [systemctl('restart', unit)];
    case 'uninstall':
      return [
        run('systemctl', ['--user', 'disable', '--now', unit], true),
        { kind: 'remove', file: t.file },
        systemctl('daemon-reload'),
      ];
  }
}

/** launchd: an agent in the user's GUI domain, its output in a log file. */
function toLaunchdSteps(action: ServiceAction, t: ServiceTarget): ServiceStep[] {
  const domain = `gui/${t.uid}`;
  const job = `${domain}/${toLaunchdLabel(t.name)}`;
  switch (action) {
    case 'install':
      return [
        { kind: 'mkdir', dir: dirname(t.file) },
        { kind: 'mkdir', dir: dirname(t.logFile ?? t.file) },
        { kind: 'write', file: t.file, text: t.text ?? '' },
        // A job loaded before (an upgrade, new flags) is unloaded first: bootstrap refuses a loaded one.
        run('launchctl', ['bootout', job], true),
        run('launchctl', ['enable', job]),
        run('launchctl', ['bootstrap', domain, t.file]),
      ];
    case 'status':
      return [run('launchctl', ['print', job])];
    case 'logs':
      return [run('tail', ['-n', String(t.lines), ...(t.follow ? ['-f'] : []), t.logFile ?? ''])];
    case 'restart':
      return [run('launchctl', ['kickstart', '-k', job])];
    case 'uninstall':
      return [run('launchctl', ['bootout', job], true), { kind: 'remove', file: t.file }];
  }
}

/** The steps of `action` on `platform`. */
export function toServiceSteps(platform: ServicePlatform, action: ServiceAction, t: ServiceTarget): ServiceStep[] {
  return platform === 'darwin' ? toLaunchdSteps(action, t) : toSystemdSteps(action, t);
}
