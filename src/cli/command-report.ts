// What `olp help` and a failed command print: each command's help (loaded with its module), and one
// line for a person when a command fails.
import type { Io } from './store-command.js';
import { UsageError } from './usage-error.js';

type HelpText = string | ((sub?: string) => string);

/** Each command's help, loaded with its module. */
const HELP: Record<string, () => Promise<HelpText>> = {
  serve: async () => (await import('./help.js')).SERVE_HELP,
  doctor: async () => (await import('./help.js')).DOCTOR_HELP,
  keys: async () => (await import('./keys-help.js')).keysHelp,
  logins: async () => (await import('./logins-help.js')).loginsHelp,
  sessions: async () => (await import('./sessions-help.js')).SESSIONS_HELP,
  usage: async () => (await import('./usage.js')).USAGE_HELP,
  responses: async () => (await import('./responses.js')).RESPONSES_HELP,
  recordings: async () => (await import('./recordings.js')).RECORDINGS_HELP,
  front: async () => (await import('./front.js')).FRONT_HELP,
  service: async () => (await import('./service-help.js')).SERVICE_HELP,
};

export const mainHelp = async () => (await import('./help.js')).MAIN_HELP;

/** `olp help [COMMAND [SUB]]`: the same text as `olp COMMAND [SUB] --help`. */
export async function help(argv: string[], io: Io): Promise<number> {
  const [command, sub] = argv;
  const load = command === undefined ? mainHelp : HELP[command];
  if (load === undefined) throw new UsageError(`no help for '${command}': there is no such command`);
  const text = await load();
  io.stdout.write(typeof text === 'function' ? text(sub) : text);
  return 0;
}

/** One line for a person: what went wrong and what to do. The stack only when asked for with --log-level debug. */
export async function report(
  err: unknown,
  command: string | undefined,
  argv: readonly string[],
  io: Io,
): Promise<number> {
  const [{ wantsStack }, { toOlpCommand }, { ConfigError }, { StateDirLocked }, { StateDirError }] = await Promise.all([
    import('./args.js'),
    import('./invocation.js'),
    import('../config/index.js'),
    import('../store/index.js'),
    import('./state-dir.js'),
  ]);
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
