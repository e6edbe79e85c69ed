import { join } from 'node:path';
import { ConfigError } from '../config/index.js';
import { StateDirLocked, type Store } from '../store/index.js';
import { loadDoctorConfig, loadStateConfig, parseCommandLine, wantsStack } from './args.js';
import { runDoctor } from './doctor.js';
import { FRONT_HELP, runFront } from './front.js';
import { DOCTOR_HELP, MAIN_HELP, SERVE_HELP } from './help.js';
import { toOlpCommand, version } from './invocation.js';
import { KEY_FLAGS, keysHelp, runKeys, UsageError } from './keys.js';
import { LOGIN_FLAGS, loginsHelp, runLogins } from './logins.js';
import { createSink } from './output.js';
import { NotConfirmed, RECORDING_FLAGS, RECORDINGS_HELP, runRecordings } from './recordings.js';
import { runServe } from './serve-command.js';
import { runService, SERVICE_HELP } from './service.js';
import { createServiceHost, createServiceRunner } from './service-host.js';
import { RESPONSES_FLAGS, RESPONSES_HELP, runResponses } from './responses.js';
import { runSessions, SESSION_FLAGS, SESSIONS_HELP } from './sessions.js';
import { StateDirError, toStateDirError } from './state-dir.js';
import { runUsage, USAGE_FLAGS, USAGE_HELP } from './usage.js';
import { runRollup } from './usage-rollup.js';
import { namedCommand, openStateStore, storeCommand, type Flat, type Io } from './store-command.js';

const keys = (argv: string[], io: Io) =>
  namedCommand(argv, io, KEY_FLAGS, keysHelp, (store, _config, sub, names, values) =>
    runKeys(
      store,
      sub,
      names,
      values,
      (s) => io.stdout.write(s),
      (s) => io.stderr.write(s),
    ),
  );

const logins = (argv: string[], io: Io) =>
  namedCommand(argv, io, LOGIN_FLAGS, loginsHelp, (store, config, sub, names, values) =>
    runLogins(store, config, sub, names, values, {
      env: io.env,
      stdin: process.stdin,
      prompt: process.stderr,
      out: (s) => io.stdout.write(s),
      err: (s) => io.stderr.write(s),
    }),
  );

const responses = (argv: string[], io: Io) =>
  storeCommand(argv, io, RESPONSES_FLAGS, RESPONSES_HELP, (store, sub, values) =>
    runResponses(store, sub, values, (s) => io.stdout.write(s)),
  );

const sessions = (argv: string[], io: Io) =>
  storeCommand(argv, io, SESSION_FLAGS, SESSIONS_HELP, (store, sub, values, config) =>
    runSessions(
      store,
      join(config.stateDir, 'slots'),
      sub,
      values,
      (s) => io.stdout.write(s),
      (s) => io.stderr.write(s),
    ),
  );

async function usage(argv: string[], io: Io): Promise<number> {
  const { values, positionals, help } = parseCommandLine(argv, USAGE_FLAGS);
  if (help || values.from === undefined)
    return storeCommand(argv, io, USAGE_FLAGS, USAGE_HELP, (store, sub, v) => runUsage(store, sub, v, io.stdout));
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  // The state dir is opened only for `--from local`: a roll-up of other machines needs none here.
  let local: Store | undefined;
  try {
    return await runRollup(sub, values, {
      ...io,
      stdin: process.stdin,
      local: () => {
        const config = loadStateConfig(values, io.env);
        local ??= openStateStore(config);
        return { store: local, tag: local.instanceTag };
      },
    });
  } finally {
    local?.close();
  }
}

async function recordings(argv: string[], io: Io): Promise<number> {
  const { values, positionals, help } = parseCommandLine(argv, RECORDING_FLAGS);
  if (help) {
    io.stdout.write(RECORDINGS_HELP);
    return 0;
  }
  const [sub, ...rest] = positionals;
  const config = loadStateConfig(values, io.env);
  try {
    return await runRecordings(config, version(), sub, rest, values as Flat, (s) => io.stdout.write(s));
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const stateErr = toStateDirError(err, config.stateDir);
    io.stderr.write(`olp: ${(stateErr ?? (err as Error)).message}\n`);
    return err instanceof NotConfirmed ? 2 : 1;
  }
}

async function doctor(argv: string[], io: Io): Promise<number> {
  const { values, positionals, help } = parseCommandLine(argv);
  if (help) {
    io.stdout.write(DOCTOR_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  return runDoctor(loadDoctorConfig(values, io.env), io.env, (s) => io.stdout.write(s));
}

const HELP: Record<string, string | ((sub?: string) => string)> = {
  serve: SERVE_HELP,
  doctor: DOCTOR_HELP,
  keys: keysHelp,
  logins: loginsHelp,
  sessions: SESSIONS_HELP,
  usage: USAGE_HELP,
  responses: RESPONSES_HELP,
  recordings: RECORDINGS_HELP,
  front: FRONT_HELP,
  service: SERVICE_HELP,
};

/** `olp help [COMMAND [SUB]]`: the same text as `olp COMMAND [SUB] --help`. */
function help(argv: string[], io: Io): number {
  const [command, sub] = argv;
  const text = command === undefined ? MAIN_HELP : HELP[command];
  if (text === undefined) throw new UsageError(`no help for '${command}': there is no such command`);
  io.stdout.write(typeof text === 'function' ? text(sub) : text);
  return 0;
}

/** One line for a person: what went wrong and what to do. The stack only when asked for with --log-level debug. */
function report(err: unknown, command: string | undefined, argv: readonly string[], io: Io): number {
  const stack = wantsStack(argv, io.env);
  if (err instanceof UsageError) {
    const topic = command !== undefined && command in HELP ? ` ${command}` : '';
    io.stderr.write(`olp: ${err.message}\nSee: ${toOlpCommand(io.env)}${topic} --help\n`);
    return 2;
  }
  if (err instanceof ConfigError) {
    io.stderr.write(`olp: ${err.message}\n`);
    return 2;
  }
  if (err instanceof StateDirLocked) {
    io.stderr.write(`olp: ${err.message}\n`);
    return 1;
  }
  if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    io.stderr.write(`olp: the port is already in use (${(err as Error).message}); pick another with --port\n`);
    return 1;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  io.stderr.write(
    `olp: ${e.message}${err instanceof StateDirError || stack ? '' : ' (add --log-level debug to see where)'}\n`,
  );
  if (stack) io.stderr.write(`${(e.cause instanceof Error ? e.cause : e).stack ?? ''}\n`);
  return 1;
}

async function main(argv: string[]): Promise<number> {
  process.umask(0o077); // everything olp creates is private to its user
  const [command, ...rest] = argv;
  // Once, for every command: a reader that went away (`olp doctor | head -3`) ends the output quietly.
  const io: Io = { env: process.env, stdout: createSink(process.stdout), stderr: createSink(process.stderr) };
  try {
    const code = await dispatch(command, rest, io);
    // The reader took what it wanted and left (`| head -1`): the output ended as it was meant to.
    // (serve keeps its own status: its stdout carries one line, and its exit says how it stopped.)
    return io.stdout.closed && command !== 'serve' ? 0 : code;
  } catch (err) {
    return report(err, command, argv, io);
  }
}

/** Runs one command; returns its exit code. */
async function dispatch(command: string | undefined, rest: string[], io: Io): Promise<number> {
  switch (command) {
    case 'serve':
      return runServe(rest, io.env, io.stdout, io.stderr, version());
    case 'keys':
      return keys(rest, io);
    case 'logins':
      return logins(rest, io);
    case 'sessions':
      return sessions(rest, io);
    case 'responses':
      return responses(rest, io);
    case 'usage':
      return usage(rest, io);
    case 'recordings':
      return recordings(rest, io);
    case 'doctor':
      return doctor(rest, io);
    case 'service':
      return runService(rest, io, createServiceHost(io.env), createServiceRunner(io.env));
    case 'front':
      return runFront(rest, io, `olp ${version()}`);
    case '--version':
    case '-v':
    case 'version':
      io.stdout.write(`${version()}\n`);
      return 0;
    case 'help':
      return help(rest, io);
    case '--help':
    case '-h':
      io.stdout.write(MAIN_HELP);
      return 0;
    case undefined:
      // Asked for nothing: the overview is the answer, not a usage error.
      io.stdout.write(MAIN_HELP);
      return 0;
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

const code = await main(process.argv.slice(2));
// serve leaves nothing running once closed; exiting explicitly also ends stray handles of the CLIs' pipes.
if (process.argv[2] === 'serve') process.exit(code);
process.exitCode = code;
