import { join } from 'node:path';
import type { Store } from '../store/index.js';
import { createSink } from './output.js';
import type { Flat, Io } from './store-command.js';
import { help, mainHelp, report } from './command-report.js';
import { UsageError } from './usage-error.js';

// Each command's code is loaded when that command runs: `olp --version` or `olp keys list` does not
// load the daemon (express, the wire formats, the backends), which took most of a command's start.

const keys = async (argv: string[], io: Io) => {
  const [{ KEY_FLAGS, keysHelp, runKeys }, { namedCommand }] = await Promise.all([
    import('./keys.js'),
    import('./store-command.js'),
  ]);
  return namedCommand(argv, io, KEY_FLAGS, keysHelp, (store, _config, sub, names, values) =>
    runKeys(
      store,
      sub,
      names,
      values,
      (s) => io.stdout.write(s),
      (s) => io.stderr.write(s),
    ),
  );
};

const logins = async (argv: string[], io: Io) => {
  const [{ LOGIN_FLAGS, loginsHelp, runLogins }, { namedCommand }] = await Promise.all([
    import('./logins.js'),
    import('./store-command.js'),
  ]);
  return namedCommand(argv, io, LOGIN_FLAGS, loginsHelp, (store, config, sub, names, values) =>
    runLogins(store, config, sub, names, values, {
      env: io.env,
      stdin: process.stdin,
      prompt: process.stderr,
      out: (s) => io.stdout.write(s),
      err: (s) => io.stderr.write(s),
    }),
  );
};

const responses = async (argv: string[], io: Io) => {
  const [{ RESPONSES_FLAGS, RESPONSES_HELP, runResponses }, { storeCommand }] = await Promise.all([
    import('./responses.js'),
    import('./store-command.js'),
  ]);
  return storeCommand(argv, io, RESPONSES_FLAGS, RESPONSES_HELP, (store, sub, values) =>
    runResponses(store, sub, values, (s) => io.stdout.write(s)),
  );
};

const sessions = async (argv: string[], io: Io) => {
  const [{ runSessions, SESSION_FLAGS, SESSIONS_HELP }, { storeCommand }] = await Promise.all([
    import('./sessions.js'),
    import('./store-command.js'),
  ]);
  return storeCommand(argv, io, SESSION_FLAGS, SESSIONS_HELP, (store, sub, values, config) =>
    runSessions(
      store,
      join(config.stateDir, 'slots'),
      sub,
      values,
      (s) => io.stdout.write(s),
      (s) => io.stderr.write(s),
    ),
  );
};

async function usage(argv: string[], io: Io): Promise<number> {
  const [
    { runUsage, USAGE_FLAGS, USAGE_HELP },
    { storeCommand, openStateStore },
    { parseCommandLine, loadStateConfig },
  ] = await Promise.all([import('./usage.js'), import('./store-command.js'), import('./args.js')]);
  const { values, positionals, help } = parseCommandLine(argv, USAGE_FLAGS);
  if (help || values.from === undefined)
    return storeCommand(argv, io, USAGE_FLAGS, USAGE_HELP, (store, sub, v) => runUsage(store, sub, v, io.stdout));
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const { runRollup } = await import('./usage-rollup.js');
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
  const [{ NotConfirmed, RECORDING_FLAGS, RECORDINGS_HELP, runRecordings }, args, { toStateDirError }, { version }] =
    await Promise.all([
      import('./recordings.js'),
      import('./args.js'),
      import('./state-dir.js'),
      import('./invocation.js'),
    ]);
  const { values, positionals, help } = args.parseCommandLine(argv, RECORDING_FLAGS);
  if (help) {
    io.stdout.write(RECORDINGS_HELP);
    return 0;
  }
  const [sub, ...rest] = positionals;
  const config = args.loadStateConfig(values, io.env);
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
  const [{ parseCommandLine, loadDoctorConfig }, { DOCTOR_HELP }] = await Promise.all([
    import('./args.js'),
    import('./help.js'),
  ]);
  const { values, positionals, help } = parseCommandLine(argv);
  if (help) {
    io.stdout.write(DOCTOR_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const { runDoctor } = await import('./doctor.js');
  return runDoctor(loadDoctorConfig(values, io.env), io.env, (s) => io.stdout.write(s));
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
    return await report(err, command, argv, io);
  }
}

/** Runs one command; returns its exit code. */
async function dispatch(command: string | undefined, rest: string[], io: Io): Promise<number> {
  switch (command) {
    case 'serve': {
      const [{ runServe }, { version }] = await Promise.all([import('./serve-command.js'), import('./invocation.js')]);
      return runServe(rest, io.env, io.stdout, io.stderr, version());
    }
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
    case 'service': {
      const [{ runService }, host] = await Promise.all([import('./service.js'), import('./service-host.js')]);
      return runService(rest, io, host.createServiceHost(io.env), host.createServiceRunner(io.env));
    }
    case 'front': {
      const [{ runFront }, { version }] = await Promise.all([import('./front.js'), import('./invocation.js')]);
      return runFront(rest, io, `olp ${version()}`);
    }
    case '--version':
    case '-v':
    case 'version':
      io.stdout.write(`${(await import('./invocation.js')).version()}\n`);
      return 0;
    case 'help':
      return help(rest, io);
    case '--help':
    case '-h':
    case undefined:
      // Asked for nothing: the overview is the answer, not a usage error.
      io.stdout.write(await mainHelp());
      return 0;
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

const code = await main(process.argv.slice(2));
// serve leaves nothing running once closed; exiting explicitly also ends stray handles of the CLIs' pipes.
if (process.argv[2] === 'serve') process.exit(code);
process.exitCode = code;
