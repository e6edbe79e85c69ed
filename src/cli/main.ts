#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, FIELDS, parseConfig, type ConfigKey } from '../config/index.js';
import { createLogger } from '../log/index.js';
import { closeInheritedFds } from '../process/index.js';
import { startDaemon } from '../serve.js';
import { openStore } from '../store/index.js';
import { runDoctor } from './doctor.js';
import { KEY_FLAGS, KEYS_USAGE, runKeys, UsageError } from './keys.js';
import { runSessions, SESSION_FLAGS, SESSIONS_USAGE } from './sessions.js';
import { runUsage, USAGE_FLAGS, USAGE_USAGE } from './usage.js';
import { NotConfirmed, RECORDING_FLAGS, RECORDINGS_USAGE, runRecordings } from './recordings.js';

const USAGE = `olp: an OpenAI-compatible proxy that answers with the coding-agent CLIs you are logged into

Usage:
  olp serve [options]              start the proxy (prints its base URL on one line)
  olp doctor [options]             check the CLIs (installed, version, login), the state dir and the port
  olp --version | --help
  ${KEYS_USAGE}
  ${SESSIONS_USAGE}
  ${USAGE_USAGE}
  ${RECORDINGS_USAGE}

Options (each also settable as OLP_* env or in <state-dir>/config.json):
${Object.entries(FIELDS)
  .filter(([, f]) => 'flag' in f)
  .map(([, f]) => `  --${(f as { flag: string }).flag.padEnd(18)} ${f.description}`)
  .join('\n')}
`;


function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** parseArgs options for every config field that has a flag. */
function configFlagOptions() {
  const options: Record<string, { type: 'string'; multiple?: boolean }> = {};
  for (const f of Object.values(FIELDS)) {
    if ('flag' in f) options[f.flag] = { type: 'string', ...(f.kind === 'list' ? { multiple: true } : {}) };
  }
  return options;
}

function toConfigFlags(values: Record<string, unknown>): Partial<Record<ConfigKey, string | string[]>> {
  const flags: Partial<Record<ConfigKey, string | string[]>> = {};
  for (const [key, f] of Object.entries(FIELDS)) {
    if ('flag' in f && values[f.flag] !== undefined) flags[key as ConfigKey] = values[f.flag] as string | string[];
  }
  return flags;
}

function parse(argv: string[], extra: Readonly<Record<string, { readonly type: 'string' | 'boolean' }>> = {}) {
  try {
    return parseArgs({ args: argv, options: { ...configFlagOptions(), ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function serve(argv: string[]): Promise<number> {
  // Before anything else is open: descriptors our parent leaked to us must not reach the CLIs.
  const closedFds = closeInheritedFds(process.env);
  const { values, positionals } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const config = parseConfig({ flags: toConfigFlags(values), env: process.env });
  const logger = createLogger(config.logLevel);
  if (closedFds.length > 0) logger.debug({ event: 'inherited_fds_closed', fds: closedFds }, `closed ${closedFds.length} descriptor(s) inherited without close-on-exec`);
  process.on('uncaughtException', (err) => logger.error({ err, event: 'uncaught_exception' }, 'uncaught exception (olp keeps serving)'));
  process.on('unhandledRejection', (err) => logger.error({ err, event: 'unhandled_rejection' }, 'unhandled rejection (olp keeps serving)'));

  // Signals are taken from the very start: one that arrives while olp starts stops it right after.
  let signalled: NodeJS.Signals | undefined;
  let onSignal: (signal: NodeJS.Signals) => void = (signal) => {
    signalled ??= signal;
  };
  process.on('SIGTERM', (s) => onSignal(s));
  process.on('SIGINT', (s) => onSignal(s));

  const daemon = await startDaemon({ config, logger, hostEnv: process.env });
  if (daemon.store.keys.activeCount() === 0) {
    logger.warn({ event: 'no_keys' }, `no API keys yet: every request will get 401. Create one with: olp keys add NAME --state-dir ${config.stateDir}`);
  }
  if (config.host !== '127.0.0.1' && config.host !== 'localhost' && config.host !== '::1') {
    logger.warn({ event: 'exposed', host: config.host }, `listening on ${config.host}: olp is reachable from other machines`);
  }
  logger.info({ event: 'listening', url: `${daemon.url}/v1`, stateDir: config.stateDir }, 'listening');
  process.stdout.write(`${daemon.url}/v1\n`);

  const code = await new Promise<number>((resolve) => {
    let stopping = false;
    onSignal = (signal) => {
      if (stopping) {
        logger.warn({ event: 'shutdown_forced', signal }, 'second signal: exiting now');
        resolve(1);
        return;
      }
      stopping = true;
      logger.info({ event: 'shutdown', signal }, 'shutting down');
      daemon.close().then(
        () => resolve(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    if (signalled) onSignal(signalled);
  });
  return new Promise<number>((resolve) => logger.flush(() => resolve(code)));
}

function keys(argv: string[]): number {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, KEY_FLAGS);
  const config = parseConfig({ flags: toConfigFlags(values), env: process.env });
  const store = openStore(config.stateDir);
  try {
    return runKeys(store, sub, positionals, values as Record<string, string | boolean | undefined>, (s) => process.stdout.write(s), (s) => process.stderr.write(s));
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) throw err;
    process.stderr.write(`olp: ${(err as Error).message}\n`);
    return 1;
  } finally {
    store.close();
  }
}

function sessions(argv: string[]): number {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, SESSION_FLAGS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const config = parseConfig({ flags: toConfigFlags(values), env: process.env });
  const store = openStore(config.stateDir);
  try {
    return runSessions(store, join(config.stateDir, 'slots'), sub, values as Record<string, string | boolean | undefined>, (s) => process.stdout.write(s), (s) => process.stderr.write(s));
  } finally {
    store.close();
  }
}

function usage(argv: string[]): number {
  const sub = argv[0] && !argv[0].startsWith('-') ? argv[0] : undefined;
  const { values, positionals } = parse(sub ? argv.slice(1) : argv, USAGE_FLAGS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const config = parseConfig({ flags: toConfigFlags(values), env: process.env });
  const store = openStore(config.stateDir);
  try {
    return runUsage(store, sub, values as Record<string, string | boolean | undefined>, (s) => process.stdout.write(s));
  } finally {
    store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  process.umask(0o077); // everything olp creates is private to its user
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve(rest);
      case 'keys':
        return keys(rest);
      case 'sessions':
        return sessions(rest);
      case 'usage':
        return usage(rest);
      case 'recordings': {
        const [sub, ...more] = rest;
        const { values, positionals } = parse(more, RECORDING_FLAGS);
        const config = parseConfig({ flags: toConfigFlags(values), env: process.env });
        try {
          return await runRecordings(config, version(), sub, positionals, values as Record<string, string | boolean | undefined>, (s) => process.stdout.write(s));
        } catch (err) {
          if (err instanceof UsageError) throw err;
          process.stderr.write(`olp: ${(err as Error).message}\n`);
          return err instanceof NotConfirmed ? 2 : 1;
        }
      }
      case 'doctor': {
        const { values, positionals } = parse(rest);
        if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
        return await runDoctor(parseConfig({ flags: toConfigFlags(values), env: process.env }), process.env, (s) => process.stdout.write(s));
      }
      case '--version':
      case '-v':
        process.stdout.write(`${version()}\n`);
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`olp: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`olp: ${err.message}\n`);
      return 2;
    }
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`olp: the port is already in use (${(err as Error).message}); pick another with --port\n`);
      return 1;
    }
    process.stderr.write(`olp: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// serve leaves nothing running once closed; exiting explicitly also ends stray handles of the CLIs' pipes.
if (process.argv[2] === 'serve') process.exit(code);
process.exitCode = code;
