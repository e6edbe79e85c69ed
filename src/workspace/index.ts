import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { killByHome } from '../process/index.js';
import { ensurePrivateDir } from '../store/index.js';

export { toChildEnv, BASE_ENV, type ChildEnvPolicy } from './env.js';

/** A file of the operator's made visible inside a workspace home (credentials, mostly). */
export interface Link {
  /** Absolute path of the real file; with `persistent`, a directory relative to the workspace's persistent dir (created if missing). */
  from: string;
  persistent?: boolean;
  /** Path relative to the workspace home. */
  to: string;
}

/** A file written into the workspace before the spawn (e.g. a system prompt read via a `-file` flag). */
export interface WorkspaceFile {
  /** Path relative to the workspace root. */
  name: string;
  content: string | Buffer;
}

export interface Workspace {
  /** Root of this workspace: `<state>/run/<keyId>/<requestId>`. */
  readonly dir: string;
  /** The child's HOME: fresh for every request. */
  readonly home: string;
  /** The child's working directory: fresh per request, or the slot's stable one. */
  readonly cwd: string;
  /**
   * A directory that outlives the request when the workspace belongs to a slot (a CLI's own
   * session store goes here); inside the request workspace otherwise (created on first use).
   */
  readonly persistent: string;
  /** Absolute path of a file inside the workspace root. */
  path(name: string): string;
  /** Writes a private (0600) file inside the workspace root; never overwrites. */
  writeFile(name: string, content: string | Buffer): void;
  /** Records the pid of the process group running here, so a sweep after a crash can stop it. */
  markOwner(pid: number): void;
  /** Removes the request's workspace (never the slot's stable directories); safe to call twice. */
  remove(): void;
  /** The same, off the event loop (the recursive delete runs on libuv's thread pool). */
  removeLater(): Promise<void>;
}

export interface CreateOptions {
  keyId: string;
  requestId: string;
  links?: readonly Link[];
  /** Directories to create inside the home (relative paths). */
  dirs?: readonly string[];
  /**
   * Ask for a stable place instead of a throwaway one: cwd and `persistent` live under
   * `<state>/slots/<keyId>/<slot>/` and survive the request (HOME stays fresh).
   */
  slot?: string;
  /** With `slot`: start the slot over (its old CLI session files are deleted first). */
  resetSlot?: boolean;
}

const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const OWNER_FILE = 'owner.pid';

function checkSegment(seg: string): void {
  if (!SAFE_SEGMENT.test(seg)) throw new Error(`unsafe workspace path segment '${seg}'`);
}

/**
 * Homes and working directories for CLI children: throwaway ones under `<state>/run`, stable
 * per-slot ones under `<state>/slots`. Knows nothing of HTTP or of any CLI: callers say what to
 * link, what to write and whether they need a stable place.
 */
export function createWorkspaces(stateDir: string) {
  const root = join(stateDir, 'run');
  const slotsRoot = join(stateDir, 'slots');
  const ready = new Set<string>();
  const removing = new Set<Promise<void>>();

  /** Creates a private directory once per process; later calls cost nothing. */
  function ensureOnce(dir: string): void {
    if (ready.has(dir)) return;
    ensurePrivateDir(dir);
    ready.add(dir);
  }

  function create(opts: CreateOptions): Workspace {
    checkSegment(opts.keyId);
    checkSegment(opts.requestId);
    if (opts.slot !== undefined) checkSegment(opts.slot);
    ensureOnce(root);
    const keyDir = join(root, opts.keyId);
    ensureOnce(keyDir);
    const dir = join(keyDir, opts.requestId);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      // The key folder was removed by a sweep since it was cached.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      ready.delete(keyDir);
      ensureOnce(keyDir);
      mkdirSync(dir, { mode: 0o700 });
    }
    const home = join(dir, 'home');
    let cwd = join(dir, 'work');
    let persistent = join(dir, 'state');
    if (opts.slot !== undefined) {
      const slotDir = join(slotsRoot, opts.keyId, opts.slot);
      // A rotated slot's previous session is abandoned: its files go, so slots never grow without bound.
      if (opts.resetSlot) rmSync(slotDir, { recursive: true, force: true, maxRetries: 3 });
      cwd = join(slotDir, 'work');
      persistent = join(slotDir, 'state');
    }
    let removed = false;
    const ws: Workspace = {
      dir,
      home,
      cwd,
      persistent,
      path: (name) => inside(dir, name),
      writeFile: (name, content) => writePrivate(inside(dir, name), content),
      markOwner: (pid) => writePrivate(join(dir, OWNER_FILE), String(pid)),
      remove() {
        if (removed) return;
        removed = true;
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      },
      removeLater() {
        if (removed) return Promise.resolve();
        removed = true;
        const p = rm(dir, { recursive: true, force: true, maxRetries: 3 }).finally(() => removing.delete(p));
        removing.add(p);
        return p;
      },
    };
    try {
      mkdirSync(home, { mode: 0o700 });
      if (opts.slot === undefined) {
        mkdirSync(cwd, { mode: 0o700 });
      } else {
        mkdirSync(cwd, { recursive: true, mode: 0o700 });
        mkdirSync(persistent, { recursive: true, mode: 0o700 });
      }
      for (const d of opts.dirs ?? []) mkdirSync(inside(home, d), { recursive: true, mode: 0o700 });
      for (const link of opts.links ?? []) {
        const from = link.persistent ? inside(persistent, link.from) : link.from;
        // The persistent dir is made only when something lives there (slots always have one).
        if (link.persistent) mkdirSync(from, { recursive: true, mode: 0o700 });
        else if (!existsSync(from)) continue;
        const target = inside(home, link.to);
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        symlinkSync(from, target);
      }
    } catch (err) {
      ws.remove();
      throw err;
    }
    return ws;
  }

  /**
   * Removes every workspace left under `run/` by an earlier process that died without cleaning
   * up, first killing the process group recorded in it if that process still runs there, and
   * then every process anywhere whose HOME lies under `run/` (one that left its group).
   * Returns how many workspaces and orphaned processes or groups it removed.
   */
  function sweep(): { workspaces: number; processes: number } {
    ready.clear();
    const found = { workspaces: 0, processes: 0 };
    if (!existsSync(root)) return found;
    const killed = new Set<number>();
    for (const key of readdirSync(root)) {
      const keyDir = join(root, key);
      let entries: string[] = [];
      try {
        entries = readdirSync(keyDir);
      } catch {
        // A stray file, not a key folder.
      }
      for (const entry of entries) {
        const owner = killOwner(join(keyDir, entry));
        if (owner !== undefined) killed.add(owner);
      }
      found.workspaces += entries.length;
      rmSync(keyDir, { recursive: true, force: true, maxRetries: 3 });
    }
    for (const pid of killByHome({ under: [root] })) killed.add(pid);
    found.processes = killed.size;
    return found;
  }

  /** Deletes a slot's stable directories (the CLI's session files with them). */
  function removeSlot(keyId: string, slot: string): void {
    checkSegment(keyId);
    checkSegment(slot);
    rmSync(join(slotsRoot, keyId, slot), { recursive: true, force: true, maxRetries: 3 });
  }

  /** Workspaces currently on disk (for leak checks and health). */
  function count(): number {
    if (!existsSync(root)) return 0;
    return readdirSync(root).reduce((n, key) => {
      try {
        return n + readdirSync(join(root, key)).length;
      } catch {
        return n;
      }
    }, 0);
  }

  /** Resolves when every removal started so far has finished. */
  async function settled(): Promise<void> {
    await Promise.allSettled([...removing]);
  }

  return { root, slotsRoot, create, sweep, removeSlot, count, settled };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;

/**
 * Kills the recorded process group of a leftover workspace, but only if that pid still runs
 * with HOME set to the workspace's home (so a recycled pid is never touched); returns the pid.
 */
function killOwner(dir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 1) return undefined;
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    if (!environ.includes(`HOME=${join(dir, 'home')}`)) return undefined;
  } catch {
    return undefined; // gone, or not ours to inspect
  }
  try {
    process.kill(-pid, 'SIGKILL');
    return pid;
  } catch {
    return undefined;
  }
}

function inside(base: string, rel: string): string {
  const full = resolve(base, rel);
  if (!full.startsWith(base + sep)) throw new Error(`path '${rel}' escapes the workspace`);
  return full;
}

function writePrivate(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // 'wx': never follow or overwrite something that is already there.
  writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
}
