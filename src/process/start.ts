import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { getSystemErrorName } from 'node:util';
import { nativeAddon, type NativeAddon, type StarterInfo } from './native.js';

export type { StarterInfo } from './native.js';

/** A started CLI process, whichever way it was started. */
export interface Child {
  readonly pid: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** The leader's exit; `spawnError` when no process was started (ENOENT, EACCES…). Never rejects. */
  readonly exited: Promise<
    { code: number | null; signal: NodeJS.Signals | null } | { spawnError: NodeJS.ErrnoException }
  >;
}

export interface StartOptions {
  command: string;
  args: readonly string[];
  /** The child's whole environment. */
  env: Readonly<Record<string, string>>;
  cwd: string;
}

const loaded = nativeAddon();

/** Which starter this daemon uses (for /health and `olp doctor`). */
export function starterInfo(): StarterInfo {
  return loaded.info;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

function spawnErrorOf(command: string, args: readonly string[], errno: number): NodeJS.ErrnoException {
  const code = getSystemErrorName(errno);
  // The same shape as Node's own spawn errors.
  return Object.assign(new Error(`spawn ${command} ${code}`), {
    errno,
    code,
    syscall: `spawn ${command}`,
    path: command,
    spawnargs: [...args],
  });
}

/** The absolute path an executable name resolves to on PATH (or the path itself), if it is runnable. */
export function findExecutable(bin: string, pathEnv: string | undefined): string | undefined {
  for (const file of candidates(bin, pathEnv)) {
    try {
      // Most PATH entries do not have it: asked without an exception for those.
      if (!statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
      accessSync(file, fsConstants.X_OK);
      return file;
    } catch {
      // not here (ENOTDIR, EACCES…), or not ours to run
    }
  }
  return undefined;
}

function candidates(bin: string, pathEnv: string | undefined): string[] {
  return bin.includes('/')
    ? [isAbsolute(bin) ? bin : resolve(bin)]
    : (pathEnv ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, bin));
}

/**
 * The file `command` names, looked up like execvp(3) does, in the child's own PATH (olp resolves
 * its CLIs' paths once at start, so this is one stat on the request path); a negative errno when
 * there is none: EACCES when only files that cannot be run were found, else ENOENT.
 */
function resolveCommand(command: string, path: string | undefined): string | number {
  if (command.includes('/')) return command;
  const found = findExecutable(command, path);
  if (found) return found;
  return candidates(command, path).some((f) => statSync(f, { throwIfNoEntry: false })?.isFile())
    ? -osConstants.errno.EACCES
    : -osConstants.errno.ENOENT;
}

function startNative(native: NativeAddon, opts: StartOptions): Child {
  let onExit!: (
    r: { code: number | null; signal: NodeJS.Signals | null } | { spawnError: NodeJS.ErrnoException },
  ) => void;
  const exited = new Promise<Parameters<typeof onExit>[0]>((resolve) => (onExit = resolve));
  const file = resolveCommand(opts.command, opts.env.PATH);
  const envp = Object.entries(opts.env).map(([k, v]) => `${k}=${v}`);
  const r =
    typeof file === 'number'
      ? file
      : native.start(file, [opts.command, ...opts.args], envp, opts.cwd, (code, signal) =>
          onExit({ code, signal: signal === null ? null : (SIGNAL_NAMES.get(signal) ?? null) }),
        );
  if (typeof r === 'number') {
    // Reported a tick later, as Node reports its spawn errors.
    queueMicrotask(() => onExit({ spawnError: spawnErrorOf(opts.command, opts.args, r) }));
    return { pid: undefined, stdin: null, stdout: null, stderr: null, exited };
  }
  const [pid, stdinFd, stdoutFd, stderrFd] = r as [number, number, number, number];
  const stdin = new Socket({ fd: stdinFd, readable: false, writable: true });
  // As Node does for its children: nothing can be written to a process that has exited.
  void exited.then(() => stdin.destroy());
  return {
    pid,
    stdin,
    stdout: new Socket({ fd: stdoutFd, readable: true, writable: false }),
    stderr: new Socket({ fd: stderrFd, readable: true, writable: false }),
    exited,
  };
}

function startWithNode(opts: StartOptions): Child {
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group, so grandchildren can be killed with it
    windowsHide: true,
  });
  const pid = child.pid;
  const exited = new Promise<Awaited<Child['exited']>>((resolve) => {
    // ENOENT, EACCES…: no process was started ('exit' never comes).
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (pid === undefined) resolve({ spawnError: err });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { pid, stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exited };
}

/**
 * Starts a CLI process in its own session (so its whole group can be killed), with three pipes.
 * On Linux this is `posix_spawn` through olp's native starter when it was built: libuv's fork
 * copies the daemon's page tables, about 2–4 ms of main-thread time per run at olp's size, where
 * posix_spawn takes a flat ~0.3 ms. Node's `child_process.spawn` otherwise.
 */
export function startChild(opts: StartOptions): Child {
  return loaded.native ? startNative(loaded.native, opts) : startWithNode(opts);
}

/** Both ways of starting a process, for tests that hold them to the same behaviour. */
export const starters: { node: (opts: StartOptions) => Child; native?: (opts: StartOptions) => Child } = {
  node: startWithNode,
  ...(loaded.native ? { native: (opts: StartOptions) => startNative(loaded.native!, opts) } : {}),
};

/**
 * Sends a signal to a process group (`-pid`); false when the group is already empty (ESRCH: the
 * normal case once a CLI has exited) or the signal could not be sent. Through the native starter
 * when it is loaded: `process.kill` says ESRCH by throwing an Error, whose stack trace cost about
 * 0.05 ms on every request.
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const number = osConstants.signals[signal];
  if (loaded.native?.signal) return loaded.native.signal(-pid, number) === 0;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
