import type { Config } from '../config/index.js';
import { createLogger, createLogOutput, type Logger } from '../log/index.js';
import { closeInheritedFds } from '../process/index.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { loadStateConfig, parseCommandLine } from './args.js';
import { runDetection } from './doctor.js';
import { SERVE_HELP } from './help.js';
import { stateDirArg, toOlpCommand } from './invocation.js';
import { UsageError } from './usage-error.js';
import type { Sink } from './output.js';
import { toStartupText } from './startup.js';
import { toStateDirError } from './state-dir.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** Start-up log records the summary for a person already says: in the text log they are not repeated. */
const SAID_BY_SUMMARY: ReadonlySet<string> = new Set([
  'no_keys',
  'credentials_missing',
  'backend_missing',
  'listening',
]);
/**
 * How long an exit waits for stderr's reader to take the last lines (a reader that has stopped is not
 * waited for).
 */
const EXIT_FLUSH_MS = 1000;

/**
 * Says which CLIs will answer and what to do next; never fails the start (a probe error only costs
 * the lines). The probes are doctor's, outside the state dir: `daemon.detect()` would put their
 * workspaces in `<state>/run` beside the requests' while olp has just started taking them. With
 * `--log-format json` the summary is one log record, so stderr stays JSON lines only.
 */
async function runStartupReport(
  daemon: Daemon,
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  addKey: string | null,
  stderr: Sink,
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  const say = (text: string) =>
    config.logFormat === 'json' ? logger.info({ event: 'startup' }, text.trimEnd()) : stderr.write(text);
  try {
    const detections = config.recordMode === 'replay' ? null : await runDetection(config, env, [], { signal });
    // Stopped before the CLIs answered: what they would have said is not known, so nothing is said.
    if (signal.aborted) return;
    say(toStartupText({ port: daemon.port, host: config.host, detections, addKey }));
  } catch (err) {
    say(`olp: could not check the CLIs (${(err as Error).message}); olp doctor tells more\n`);
  }
}

/** Signals taken from the very start: one that arrives while olp starts stops it right after. */
interface SignalLatch {
  signalled: NodeJS.Signals | undefined;
  on: (signal: NodeJS.Signals) => void;
}

function latchSignals(): SignalLatch {
  const latch: SignalLatch = {
    signalled: undefined,
    on: (signal) => {
      latch.signalled ??= signal;
    },
  };
  process.on('SIGTERM', (s) => latch.on(s));
  process.on('SIGINT', (s) => latch.on(s));
  return latch;
}

/** Logs what the process inherited and keeps serving through an uncaught error. */
function watchProcess(logger: Logger, closedFds: readonly number[]): void {
  if (closedFds.length > 0)
    logger.debug(
      { event: 'inherited_fds_closed', fds: closedFds },
      `closed ${closedFds.length} descriptor(s) inherited without close-on-exec`,
    );
  process.on('uncaughtException', (err) =>
    logger.error({ err, event: 'uncaught_exception' }, 'uncaught exception (olp keeps serving)'),
  );
  process.on('unhandledRejection', (err) =>
    logger.error({ err, event: 'unhandled_rejection' }, 'unhandled rejection (olp keeps serving)'),
  );
}

/**
 * The listening daemon announced: warnings (no keys, not loopback), the log line, and the base URL on
 * stdout. Returns the command that adds a first key, when there is none.
 */
function announce(
  daemon: Daemon,
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
  stdout: Sink,
): string | null {
  const addKey =
    daemon.store.keys.activeCount() === 0 ? `${toOlpCommand(env)} keys add NAME${stateDirArg(config.stateDir)}` : null;
  if (addKey)
    logger.warn({ event: 'no_keys' }, `no API keys yet: every request will get 401. Create one with: ${addKey}`);
  if (!LOOPBACK.has(config.host)) {
    logger.warn(
      { event: 'exposed', host: config.host },
      `listening on ${config.host}: olp is reachable from other machines`,
    );
  }
  logger.info({ event: 'listening', url: `${daemon.url}/v1`, stateDir: config.stateDir }, 'listening');
  // The first line on stdout is the base URL, alone: scripts and tests read it. The rest is for a person,
  // on stderr.
  stdout.write(`${daemon.url}/v1\n`);
  return addKey;
}

/**
 * Resolves with the exit code once a signal has stopped the daemon (0), or a second signal came, or the
 * shutdown failed (1).
 */
function untilStopped(
  latch: SignalLatch,
  daemon: Daemon,
  report: Promise<void>,
  stopReport: AbortController,
  logger: Logger,
): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    latch.on = (signal) => {
      if (stopping) {
        logger.warn({ event: 'shutdown_forced', signal }, 'second signal: exiting now');
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ event: 'shutdown', signal }, 'shutting down');
      // The start-up report's status commands are stopped, and have gone, before olp closes.
      stopReport.abort();
      report
        .then(() => daemon.close())
        .then(
          () => resolve(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            resolve(1);
          },
        );
    };
    if (latch.signalled) latch.on(latch.signalled);
  });
}

/** `olp serve`: listens until SIGTERM/SIGINT; returns the exit code. */
export async function runServe(
  argv: string[],
  env: Readonly<Record<string, string | undefined>>,
  stdout: Sink,
  stderr: Sink,
  version?: string,
): Promise<number> {
  // Before anything else is open: descriptors our parent leaked to us must not reach the CLIs.
  const closedFds = closeInheritedFds(env);
  const { values, positionals, help } = parseCommandLine(argv);
  if (help) {
    stdout.write(SERVE_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const config = loadStateConfig(values, env);
  const output = createLogOutput(process.stderr, config.logFormat);
  const logger = createLogger(config.logLevel, output);
  // A person reads the summary first and once: the start-up's log lines wait for it (text log only).
  if (config.logFormat === 'text') output.hold(SAID_BY_SUMMARY);
  watchProcess(logger, closedFds);
  const latch = latchSignals();
  let daemon: Daemon;
  try {
    daemon = await startDaemon({ config, logger, hostEnv: env, ...(version ? { version } : {}) });
  } catch (err) {
    output.release();
    throw toStateDirError(err, config.stateDir) ?? err;
  }
  const addKey = announce(daemon, config, env, logger, stdout);
  const stopReport = new AbortController();
  const report = runStartupReport(daemon, config, env, addKey, stderr, logger, stopReport.signal).finally(() =>
    output.release(),
  );
  const code = await untilStopped(latch, daemon, report, stopReport, logger);
  await output.settle(EXIT_FLUSH_MS);
  return code;
}
