// The run dir and the slots dir a process makes workspaces under: which directories it has made, the
// removals still running, and the slot-level operations (reset, prune, remove).
import { mkdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { join, sep } from 'node:path';
import { createTreeRemover, type TreeRemover } from '../process/index.js';
import { ensurePrivateDir } from '../store/index.js';
import { checkSegment, inside, runDirFor, SESSION_ID, under } from './paths.js';
import { countWorkspaces, sweepWorkspaces } from './sweep.js';
import type { Link, SlotReset } from './types.js';

const noop = (): void => undefined;

/** The roots of one process's workspaces and what it knows of the directories under them. */
export class WorkspaceRoots {
  readonly root: string;
  /** Where workspaces went before the run dir could live elsewhere: a crash may have left some. */
  readonly legacyRoot: string;
  readonly slotsRoot: string;
  /** Directories made by this process (so later uses cost nothing). */
  readonly ready = new Set<string>();
  readonly removing = new Set<Promise<void>>();
  readonly remover: TreeRemover;
  private discarded = 0;

  constructor(stateDir: string, opts: { runDir?: string; path?: string | undefined }) {
    this.root = runDirFor(stateDir, opts.runDir);
    this.legacyRoot = join(stateDir, 'run');
    this.slotsRoot = join(stateDir, 'slots');
    // `path`: the daemon's PATH, where the tree remover finds `rm` and `find`.
    this.remover = createTreeRemover(200, opts.path);
  }

  /** Creates a private directory (and its parents) once per process; later calls cost nothing. */
  ensureOnce(dir: string): void {
    if (this.ready.has(dir)) return;
    // Under olp's own 0700 roots a plain mkdir is private enough; the roots themselves are checked.
    if (dir === this.root || dir === this.slotsRoot) ensurePrivateDir(dir);
    else mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.ready.add(dir);
  }

  /** Forgets that a directory (and everything under it) was made. */
  forget(dir: string): void {
    for (const d of [...this.ready]) if (d === dir || d.startsWith(dir + sep)) this.ready.delete(d);
  }

  /** Keeps a removal in the set `settled()` waits for. */
  track(p: Promise<void>): Promise<void> {
    const tracked = p.finally(() => this.removing.delete(tracked));
    this.removing.add(tracked);
    return tracked;
  }

  /** Whether a reset with this stale session deletes only its files, in the background. */
  private prunable(persistent: string, staleSession: string | undefined): staleSession is string {
    return staleSession !== undefined && SESSION_ID.test(staleSession) && this.ready.has(persistent);
  }

  /** A slot's session store starts over: only a known session's files go, or the whole store. */
  resetPersistent(persistent: string, reset: SlotReset): void {
    const { staleSession, after } = reset;
    if (!this.prunable(persistent, staleSession)) return this.discardLater(persistent);
    const writersGone = after ? after.then(noop, noop) : Promise.resolve();
    this.track(writersGone.then(() => this.remover.prune(persistent, staleSession))).catch(noop);
  }

  /**
   * Takes a directory out of the way at once (one rename) and deletes it off the event loop; its
   * cached "already made" entries are forgotten so the next use makes it afresh.
   */
  private discardLater(dir: string): void {
    this.forget(dir);
    const trash = `${dir}.discarded-${process.pid}-${++this.discarded}`;
    try {
      renameSync(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    this.track(this.remover.remove(trash)).catch(() => undefined);
  }

  /** Removes what an earlier process left under the run dirs (see `sweepWorkspaces`). */
  sweep(): { workspaces: number; processes: number } {
    this.ready.clear();
    return sweepWorkspaces({ root: this.root, legacyRoot: this.legacyRoot, slotsRoot: this.slotsRoot });
  }

  /**
   * Starts a slot over under a workspace made earlier for it (a pre-started CLI): its previous
   * session files are set aside as `create({ resetSlot })` would, and the persistent directories
   * the workspace's links point into are made again, empty.
   */
  resetSlot(keyId: string, slot: string, links: readonly Link[], reset: SlotReset = {}): void {
    const persistent = under(this.slotDir(keyId, slot), 'state');
    this.resetPersistent(persistent, reset);
    this.ensureOnce(persistent);
    for (const link of links) if (link.persistent) this.ensureOnce(inside(persistent, link.from));
  }

  /**
   * Deletes one session's files from a slot's store, in the background, leaving the rest: the
   * session a fork has copied. Nothing happens for an id that cannot name files safely.
   */
  pruneSession(keyId: string, slot: string, sessionId: string): void {
    if (!SESSION_ID.test(sessionId)) return;
    this.track(this.remover.prune(under(this.slotDir(keyId, slot), 'state'), sessionId)).catch(noop);
  }

  /**
   * Whether starting this slot over with this stale session is a background deletion of its
   * files (then the session's CLI may still be exiting: pass it as `after`).
   */
  prunes(keyId: string, slot: string, staleSession: string | undefined): boolean {
    return this.prunable(under(this.slotDir(keyId, slot), 'state'), staleSession);
  }

  /** A slot's stable directory, from checked names. */
  slotDir(keyId: string, slot: string): string {
    checkSegment(keyId);
    checkSegment(slot);
    return under(under(this.slotsRoot, keyId), slot);
  }

  /** Deletes a slot's stable directories (the CLI's session files with them). */
  removeSlot(keyId: string, slot: string): void {
    const dir = this.slotDir(keyId, slot);
    this.forget(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Workspaces currently on disk (for leak checks and health). */
  count(): number {
    return countWorkspaces(this.root);
  }

  /**
   * Resolves when every removal started so far has finished (or after 10 s: a stuck one is swept at the
   * next start).
   */
  async settled(): Promise<void> {
    this.remover.flush();
    await Promise.race([Promise.allSettled([...this.removing]), new Promise((r) => setTimeout(r, 10_000).unref())]);
  }

  /** After the last sweep at shutdown: takes the (empty) run dir away, leaving nothing in /dev/shm. */
  close(): void {
    this.ready.clear();
    try {
      rmdirSync(this.root);
    } catch {
      // Missing, or a file appeared in it: the next start's sweep deals with it.
    }
  }
}
