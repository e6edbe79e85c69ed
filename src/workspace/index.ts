import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { createTreeRemover, killByHome } from '../process/index.js';
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
  /** Root of this workspace: `<run dir>/<keyId>/<requestId>` (see `runDirFor`). */
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
  /** With `slot`: start the slot over (its old CLI session files are deleted). */
  resetSlot?: SlotReset;
}

/** How a slot starts over. */
export interface SlotReset {
  /**
   * The id of the session the slot held. The CLIs name a session's files after it, so only
   * paths carrying it are deleted, in the background, and the slot's directories stay (no
   * directory is made again on the request's path). Without it the whole persistent dir is set
   * aside (one rename) and made again.
   */
  staleSession?: string | undefined;
  /**
   * What still writes the old session (its CLI, exiting): its files are deleted once this
   * settles. Only for a reset that `prunes` says is a background deletion; a whole-store reset
   * renames the directory at once, so its writers must be gone before.
   */
  after?: Promise<unknown> | undefined;
}

const noop = (): void => undefined;
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A CLI session id that can go into a file-name pattern as it is (claude's UUIDs, codex's thread ids). */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9-]{7,63}$/;

function checkSegment(seg: string): void {
  if (!SAFE_SEGMENT.test(seg)) throw new Error(`unsafe workspace path segment '${seg}'`);
}

const TMPFS_MAGIC = 0x01021994;
const SHM = '/dev/shm';

/**
 * Where a state dir's throwaway workspaces go when no run dir is configured: a private folder on
 * the memory file system (`/dev/shm/olp-<uid>/<hash of the state dir>`) when there is one we can
 * own, else `<state>/run`. A workspace is made and deleted for every request; on tmpfs that costs
 * a few microseconds per directory instead of ~100 µs (and far more while a removal runs) on a
 * journalled disk. Nothing there needs to outlive the process: the slots' session files stay in
 * `<state>/slots`.
 */
export function runDirFor(stateDir: string, configured?: string, shm = SHM): string {
  if (configured) return resolve(configured);
  const onDisk = join(stateDir, 'run');
  const uid = process.getuid?.();
  if (uid === undefined) return onDisk;
  try {
    if (statfsSync(shm).type !== TMPFS_MAGIC) return onDisk;
    const mine = join(shm, `olp-${uid}`);
    try {
      mkdirSync(mine, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return onDisk;
    }
    // /dev/shm is shared by every user: use the folder only if it is a real directory of ours
    // that nobody else can enter (a symlink or someone else's folder sends us back to disk).
    const st = lstatSync(mine);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return onDisk;
    return join(mine, createHash('sha256').update(resolve(stateDir)).digest('hex').slice(0, 16));
  } catch {
    return onDisk;
  }
}

/**
 * Homes and working directories for CLI children: throwaway ones under the run dir (see
 * `runDirFor`), stable per-slot ones under `<state>/slots`. Knows nothing of HTTP or of any CLI:
 * callers say what to link, what to write and whether they need a stable place.
 */
export function createWorkspaces(stateDir: string, opts: { runDir?: string } = {}) {
  const root = runDirFor(stateDir, opts.runDir);
  // Where workspaces went before the run dir could live elsewhere: a crash may have left some.
  const legacyRoot = join(stateDir, 'run');
  const slotsRoot = join(stateDir, 'slots');
  const ready = new Set<string>();
  const removing = new Set<Promise<void>>();
  let discarded = 0;
  const remover = createTreeRemover();

  /** Creates a private directory (and its parents) once per process; later calls cost nothing. */
  function ensureOnce(dir: string): void {
    if (ready.has(dir)) return;
    // Under olp's own 0700 roots a plain mkdir is private enough; the roots themselves are checked.
    if (dir === root || dir === slotsRoot) ensurePrivateDir(dir);
    else mkdirSync(dir, { recursive: true, mode: 0o700 });
    ready.add(dir);
  }

  function create(opts: CreateOptions): Workspace {
    checkSegment(opts.keyId);
    checkSegment(opts.requestId);
    if (opts.slot !== undefined) checkSegment(opts.slot);
    ensureOnce(root);
    const keyDir = under(root, opts.keyId);
    ensureOnce(keyDir);
    const dir = under(keyDir, opts.requestId);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      // The key folder was removed by a sweep since it was cached.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      ready.delete(keyDir);
      ensureOnce(keyDir);
      mkdirSync(dir, { mode: 0o700 });
    }
    const home = under(dir, 'home');
    let cwd = under(dir, 'work');
    let persistent = under(dir, 'state');
    if (opts.slot !== undefined) {
      ensureOnce(slotsRoot);
      const stable = slotDir(opts.keyId, opts.slot);
      cwd = under(stable, 'work');
      persistent = under(stable, 'state');
      // A rotated slot's previous session is abandoned: its files (all under the persistent dir)
      // go, so slots never grow without bound. The empty working directory stays.
      if (opts.resetSlot) resetPersistent(persistent, opts.resetSlot);
    }
    let removed = false;
    const ws: Workspace = {
      dir,
      home,
      cwd,
      persistent,
      path: (name) => inside(dir, name),
      writeFile: (name, content) => writePrivate(inside(dir, name), content, dir),
      remove() {
        if (removed) return;
        removed = true;
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      },
      removeLater() {
        if (removed) return Promise.resolve();
        removed = true;
        return track(remover.remove(dir));
      },
    };
    try {
      mkdirSync(home, { mode: 0o700 });
      if (opts.slot === undefined) mkdirSync(cwd, { mode: 0o700 });
      else {
        // A slot's stable directories are made once per process (and again after a reset); one
        // stat notices a slot deleted behind olp's back (`olp sessions rotate` while it serves).
        if (ready.has(cwd) && !existsSync(cwd)) forget(slotDir(opts.keyId, opts.slot));
        ensureOnce(cwd);
        ensureOnce(persistent);
      }
      for (const d of opts.dirs ?? []) mkdirSync(inside(home, d), { recursive: true, mode: 0o700 });
      const made = new Set<string>([home]);
      for (const link of opts.links ?? []) {
        const from = link.persistent ? inside(persistent, link.from) : link.from;
        // The persistent dir is made only when something lives there (slots always have one).
        if (link.persistent) {
          if (opts.slot !== undefined) ensureOnce(from);
          else mkdirSync(from, { recursive: true, mode: 0o700 });
        } else if (!existsSync(from)) continue;
        const target = inside(home, link.to);
        const parent = dirname(target);
        if (!made.has(parent)) {
          mkdirSync(parent, { recursive: true, mode: 0o700 });
          made.add(parent);
        }
        symlinkSync(from, target);
      }
    } catch (err) {
      ws.remove();
      throw err;
    }
    return ws;
  }

  /** Forgets that a directory (and everything under it) was made. */
  function forget(dir: string): void {
    for (const d of [...ready]) if (d === dir || d.startsWith(dir + sep)) ready.delete(d);
  }

  /** Keeps a removal in the set `settled()` waits for. */
  function track(p: Promise<void>): Promise<void> {
    const tracked = p.finally(() => removing.delete(tracked));
    removing.add(tracked);
    return tracked;
  }

  /** Whether a reset with this stale session deletes only its files, in the background. */
  function prunable(persistent: string, staleSession: string | undefined): staleSession is string {
    return staleSession !== undefined && SESSION_ID.test(staleSession) && ready.has(persistent);
  }

  /** A slot's session store starts over: only a known session's files go, or the whole store. */
  function resetPersistent(persistent: string, reset: SlotReset): void {
    const { staleSession, after } = reset;
    if (!prunable(persistent, staleSession)) return discardLater(persistent);
    const writersGone = after ? after.then(noop, noop) : Promise.resolve();
    track(writersGone.then(() => remover.prune(persistent, staleSession))).catch(noop);
  }

  /**
   * Takes a directory out of the way at once (one rename) and deletes it off the event loop; its
   * cached "already made" entries are forgotten so the next use makes it afresh.
   */
  function discardLater(dir: string): void {
    forget(dir);
    const trash = `${dir}.discarded-${process.pid}-${++discarded}`;
    try {
      renameSync(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    track(remover.remove(trash)).catch(() => undefined);
  }

  /**
   * Removes every workspace left under `run/` by an earlier process that died without cleaning
   * up, first killing every process whose HOME lies under `run/` (found by its environment, so
   * one that left its process group is found too). Returns how many workspaces and processes.
   */
  function sweep(): { workspaces: number; processes: number } {
    ready.clear();
    const found = { workspaces: 0, processes: 0 };
    const roots = (root === legacyRoot ? [root] : [root, legacyRoot]).filter((r) => existsSync(r));
    // Every process still running with a home under a run dir, in its CLI's process group or not.
    if (roots.length > 0) found.processes = killByHome({ under: roots }).length;
    for (const r of roots) {
      for (const key of readdirSync(r)) {
        const keyDir = join(r, key);
        found.workspaces += list(keyDir).length;
        rmSync(keyDir, { recursive: true, force: true, maxRetries: 3 });
      }
    }
    // Session files a rotation had set aside but not yet deleted when olp stopped.
    for (const key of list(slotsRoot)) {
      for (const slot of list(join(slotsRoot, key))) {
        for (const e of list(join(slotsRoot, key, slot))) if (e.includes('.discarded-')) rmSync(join(slotsRoot, key, slot, e), { recursive: true, force: true, maxRetries: 3 });
      }
    }
    return found;
  }

  /** A directory's entries; none when it is missing or not a directory. */
  function list(dir: string): string[] {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  }

  /**
   * Starts a slot over under a workspace made earlier for it (a pre-started CLI): its previous
   * session files are set aside as `create({ resetSlot })` would, and the persistent directories
   * the workspace's links point into are made again, empty.
   */
  function resetSlot(keyId: string, slot: string, links: readonly Link[], reset: SlotReset = {}): void {
    const persistent = under(slotDir(keyId, slot), 'state');
    resetPersistent(persistent, reset);
    ensureOnce(persistent);
    for (const link of links) if (link.persistent) ensureOnce(inside(persistent, link.from));
  }

  /**
   * Deletes one session's files from a slot's store, in the background, leaving the rest: the
   * session a fork has copied. Nothing happens for an id that cannot name files safely.
   */
  function pruneSession(keyId: string, slot: string, sessionId: string): void {
    if (!SESSION_ID.test(sessionId)) return;
    track(remover.prune(under(slotDir(keyId, slot), 'state'), sessionId)).catch(noop);
  }

  /**
   * Whether starting this slot over with this stale session is a background deletion of its
   * files (then the session's CLI may still be exiting: pass it as `after`).
   */
  function prunes(keyId: string, slot: string, staleSession: string | undefined): boolean {
    return prunable(under(slotDir(keyId, slot), 'state'), staleSession);
  }

  /** A slot's stable directory, from checked names. */
  function slotDir(keyId: string, slot: string): string {
    checkSegment(keyId);
    checkSegment(slot);
    return under(under(slotsRoot, keyId), slot);
  }

  /** Deletes a slot's stable directories (the CLI's session files with them). */
  function removeSlot(keyId: string, slot: string): void {
    const dir = slotDir(keyId, slot);
    forget(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
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

  /** Resolves when every removal started so far has finished (or after 10 s: a stuck one is swept at the next start). */
  async function settled(): Promise<void> {
    remover.flush();
    await Promise.race([Promise.allSettled([...removing]), new Promise((r) => setTimeout(r, 10_000).unref())]);
  }

  /** After the last sweep at shutdown: takes the (empty) run dir away, leaving nothing in /dev/shm. */
  function close(): void {
    ready.clear();
    try {
      rmdirSync(root);
    } catch {
      // Missing, or a file appeared in it: the next start's sweep deals with it.
    }
  }

  return { root, slotsRoot, create, sweep, resetSlot, prunes, pruneSession, removeSlot, count, settled, close };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;

/**
 * `join(base, seg)` for a base that is already normal (made by `join`) and a segment known to be
 * one plain name (checked, or a constant): path.join re-normalises the whole string each time.
 */
function under(base: string, seg: string): string {
  return base.endsWith(sep) ? base + seg : base + sep + seg;
}

/** A relative path of plain names only: no empty, `.` or `..` segment, no NUL. */
const PLAIN_RELATIVE = /^(?!\.\.?(?:\/|$))(?:[^/\0]+\/(?!\.\.?(?:\/|$)))*[^/\0]+$/;

function inside(base: string, rel: string): string {
  // The common case (`.claude/projects`) needs no resolving: plain names cannot climb out of base.
  if (sep === '/' && PLAIN_RELATIVE.test(rel) && isAbsolute(base)) return under(base, rel);
  const full = resolve(base, rel);
  if (!full.startsWith(base + sep)) throw new Error(`path '${rel}' escapes the workspace`);
  return full;
}

function writePrivate(path: string, content: string | Buffer, root: string): void {
  if (dirname(path) !== root) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // 'wx': never follow or overwrite something that is already there.
  writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
}
