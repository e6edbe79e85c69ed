import { existsSync, mkdirSync, renameSync, rmdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { createTreeRemover } from '../process/index.js';
import { ensurePrivateDir } from '../store/index.js';
import { checkSegment, inside, runDirFor, SESSION_ID, under, writePrivate } from './paths.js';
import { countWorkspaces, sweepWorkspaces } from './sweep.js';
import type { CreateOptions, Link, SlotReset, Workspace } from './types.js';

export { toChildEnv, BASE_ENV, type ChildEnvPolicy } from './env.js';
export { runDirFor } from './paths.js';
export type { CreateOptions, Link, SlotReset, Workspace, WorkspaceFile } from './types.js';

const noop = (): void => undefined;

/**
 * Homes and working directories for CLI children: throwaway ones under the run dir (see
 * `runDirFor`), stable per-slot ones under `<state>/slots`. Knows nothing of HTTP or of any CLI:
 * callers say what to link, what to write and whether they need a stable place.
 */
export function createWorkspaces(stateDir: string, opts: { runDir?: string; path?: string | undefined } = {}) {
  const root = runDirFor(stateDir, opts.runDir);
  // Where workspaces went before the run dir could live elsewhere: a crash may have left some.
  const legacyRoot = join(stateDir, 'run');
  const slotsRoot = join(stateDir, 'slots');
  const ready = new Set<string>();
  const removing = new Set<Promise<void>>();
  let discarded = 0;
  // `path`: the daemon's PATH, where the tree remover finds `rm` and `find`.
  const remover = createTreeRemover(200, opts.path);

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

  /** Removes what an earlier process left under the run dirs (see `sweepWorkspaces`). */
  function sweep(): { workspaces: number; processes: number } {
    ready.clear();
    return sweepWorkspaces({ root, legacyRoot, slotsRoot });
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
    return countWorkspaces(root);
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
