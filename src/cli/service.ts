import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { FIELDS } from '../config/index.js';
import { loadDoctorConfig, loadStateConfig, parseCommandLine, type Values } from './args.js';
import { toOlpCommand } from './invocation.js';
import { UsageError } from './usage-error.js';
import { SERVICE_FLAGS, SERVICE_HELP } from './service-help.js';
import {
  toServiceName,
  toServicePaths,
  toServicePlatform,
  toServiceSpec,
  type ServiceHost,
  type ServicePlatform,
} from './service-spec.js';
import { toServiceSteps, type ServiceAction, type ServiceStep, type ServiceTarget } from './service-steps.js';
import { toLaunchdPlist, toSystemdUnit } from './service-text.js';
import type { Io } from './store-command.js';

export { SERVICE_HELP } from './service-help.js';
export type { ServiceHost } from './service-spec.js';

/** Runs systemctl, journalctl, launchctl or tail with olp's stdout and stderr: injected, so tests run their own. */
export interface ServiceRunner {
  /** The command's exit code; null when it could not be started (not installed). */
  run(command: string, args: readonly string[]): Promise<number | null>;
}

const ACTIONS: readonly ServiceAction[] = ['install', 'status', 'logs', 'restart', 'uninstall'];
const SERVE_FLAGS = new Set(Object.values(FIELDS).flatMap((f) => ('flag' in f ? [f.flag] : [])));

/** The command line checked: which action, and the options that go with it only. */
function parseServiceLine(argv: string[]): { action?: ServiceAction; values: Values; help: boolean } {
  const { values, positionals, help } = parseCommandLine(argv, SERVICE_FLAGS);
  const [sub, ...rest] = positionals;
  if (help || sub === undefined) return { values, help: true };
  const action = ACTIONS.find((a) => a === sub);
  if (!action) throw new UsageError(`unknown service command '${sub}'`);
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const given = (flags: Iterable<string>) => [...flags].find((f) => values[f] !== undefined);
  const serveOnly = given([...SERVE_FLAGS, 'print'].filter((f) => f !== 'state-dir' && f !== 'log-level'));
  if (action !== 'install' && serveOnly)
    throw new UsageError(`--${serveOnly} goes with olp service install, not ${action}`);
  const printOnly = values.print === undefined && given(['platform', 'system']);
  if (printOnly) throw new UsageError(`--${printOnly} goes with --print`);
  const logsOnly = action !== 'logs' && given(['follow', 'lines']);
  if (logsOnly) throw new UsageError(`--${logsOnly} goes with olp service logs, not ${action}`);
  return { action, values, help: false };
}

function toLines(raw: Values[string]): number {
  if (raw === undefined) return 100;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`--lines must be a positive integer, not '${String(raw)}'`);
  return Number(raw);
}

/** Carries out the steps in order; the first failing command (unless it may fail) stops them. */
async function runSteps(
  steps: readonly ServiceStep[],
  runner: ServiceRunner,
): Promise<{ code: number; failed?: Extract<ServiceStep, { kind: 'run' }> }> {
  for (const step of steps) {
    if (step.kind === 'mkdir') mkdirSync(step.dir, { recursive: true, mode: 0o700 });
    else if (step.kind === 'write') writeFileSync(step.file, step.text);
    else if (step.kind === 'remove') rmSync(step.file, { force: true });
    else {
      const code = await runner.run(step.command, step.args);
      if (code === null) return { code: 127, failed: step };
      if (code !== 0 && !step.mayFail) return { code, failed: step };
    }
  }
  return { code: 0 };
}

/** One line on why a command failed, and what to do. */
function toFailureText(failed: Extract<ServiceStep, { kind: 'run' }>, code: number, file: string): string {
  const command = [failed.command, ...failed.args].join(' ');
  if (code === 127)
    return `olp: ${failed.command} was not found: olp service works with systemd (systemctl) or launchd (launchctl); olp service install --print writes the unit to use elsewhere\n`;
  const unreachable =
    failed.command === 'systemctl'
      ? ': is a user service manager running here? (not in most containers, nor over ssh without a login session); ' +
        'olp service install --print --system writes a system-wide unit instead'
      : '';
  return `olp: \`${command}\` failed (exit ${code})${unreachable}; the unit is ${file}\n`;
}

/** What install says once done: how to look at it, and (Linux) how to keep it running without a login. */
function toInstalledText(platform: ServicePlatform, t: ServiceTarget, host: ServiceHost): string {
  const olp = toOlpCommand(host.env);
  const name = t.name === 'olp' ? '' : ` --name ${t.name}`;
  const look = `  ${olp} service status${name}\n  ${olp} service logs${name} -f\n`;
  if (platform === 'darwin')
    return `olp: installed ${t.file} and loaded it: it runs now and at each login; its log is ${t.logFile}\n${look}`;
  const lingering = existsSync(`/var/lib/systemd/linger/${host.user}`);
  return (
    `olp: installed ${t.file}, enabled and started ${t.name}.service\n${look}` +
    (lingering
      ? `Linger is on for ${host.user}: it starts at boot and runs without a login session.\n`
      : 'It runs while you are logged in. To start it at boot and keep it running after you log out:\n' +
        `  loginctl enable-linger ${host.user}\n`)
  );
}

/** `olp service install`: the unit or plist written (or printed with --print), enabled and started. */
async function install(values: Values, io: Io, host: ServiceHost, runner: ServiceRunner): Promise<number> {
  const name = toServiceName(values.name);
  const platform = toServicePlatform(values.platform, host);
  if (values.system && platform !== 'linux') throw new UsageError('--system is for systemd units (--platform linux)');
  const print = values.print === true;
  // --print creates nothing (the state dir may be another machine's); install makes the state dir ready (0700).
  const config = print ? loadDoctorConfig(values, io.env) : loadStateConfig(values, io.env);
  const { spec, left } = toServiceSpec({
    name,
    platform,
    values,
    stateDir: config.stateDir,
    host,
    system: values.system === true,
  });
  if (left.length > 0) io.stderr.write(`olp: left out of the unit: ${left.join('; ')}\n`);
  const text = platform === 'darwin' ? toLaunchdPlist(spec) : toSystemdUnit(spec);
  if (print) {
    io.stdout.write(text);
    return 0;
  }
  const target = { ...toTarget(name, platform, host, values), text };
  const r = await runSteps(toServiceSteps(platform, 'install', target), runner);
  if (r.failed) {
    io.stderr.write(toFailureText(r.failed, r.code, target.file));
    return 1;
  }
  io.stdout.write(toInstalledText(platform, target, host));
  return 0;
}

function toTarget(name: string, platform: ServicePlatform, host: ServiceHost, values: Values): ServiceTarget {
  return {
    name,
    ...toServicePaths(platform, name, host),
    uid: host.uid,
    lines: toLines(values.lines),
    follow: values.follow === true,
  };
}

/** status, logs, restart, uninstall: on an installed service only (uninstall of none does nothing). */
async function manage(
  action: Exclude<ServiceAction, 'install'>,
  values: Values,
  io: Io,
  host: ServiceHost,
  runner: ServiceRunner,
): Promise<number> {
  const platform = toServicePlatform(undefined, host);
  const target = toTarget(toServiceName(values.name), platform, host, values);
  if (!existsSync(target.file)) {
    io.stderr.write(`olp: no service ${target.name} is installed here (no ${target.file})\n`);
    return action === 'uninstall' ? 0 : 1;
  }
  const r = await runSteps(toServiceSteps(platform, action, target), runner);
  // status and logs say it themselves (systemctl status exits 3 for a stopped service).
  if (r.failed && (r.code === 127 || action === 'restart' || action === 'uninstall'))
    io.stderr.write(toFailureText(r.failed, r.code, target.file));
  if (action === 'uninstall' && !r.failed)
    io.stdout.write(`olp: stopped ${target.name} and removed ${target.file}; the state dir and its keys are kept\n`);
  return r.code === 0 ? 0 : r.code === 127 ? 1 : r.code;
}

/** `olp service …`. */
export async function runService(argv: string[], io: Io, host: ServiceHost, runner: ServiceRunner): Promise<number> {
  const { action, values, help } = parseServiceLine(argv);
  if (help || action === undefined) {
    io.stdout.write(SERVICE_HELP);
    return 0;
  }
  return action === 'install' ? install(values, io, host, runner) : manage(action, values, io, host, runner);
}
