// Making one workspace: its directories (fresh, or a slot's stable ones), then the operator's files
// linked into its home.
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { checkSegment, inside, under, writePrivate } from './paths.js';
import type { WorkspaceRoots } from './roots.js';
import type { CreateOptions, Workspace } from './types.js';

/** A new workspace for one request (see `createWorkspaces`). */
export function createWorkspace(roots: WorkspaceRoots, opts: CreateOptions): Workspace {
  checkSegment(opts.keyId);
  checkSegment(opts.requestId);
  if (opts.slot !== undefined) checkSegment(opts.slot);
  const dir = makeRequestDir(roots, opts.keyId, opts.requestId);
  const home = under(dir, 'home');
  let cwd = under(dir, 'work');
  let persistent = under(dir, 'state');
  if (opts.slot !== undefined) {
    roots.ensureOnce(roots.slotsRoot);
    const stable = roots.slotDir(opts.keyId, opts.slot);
    cwd = under(stable, 'work');
    persistent = under(stable, 'state');
    // A rotated slot's previous session is abandoned: its files (all under the persistent dir)
    // go, so slots never grow without bound. The empty working directory stays.
    if (opts.resetSlot) roots.resetPersistent(persistent, opts.resetSlot);
  }
  const ws = toWorkspace(roots, dir, home, cwd, persistent);
  try {
    makeDirs(roots, opts, ws);
    linkFiles(roots, opts, ws);
  } catch (err) {
    ws.remove();
    throw err;
  }
  return ws;
}

/** `<run dir>/<keyId>/<requestId>`, made private. */
function makeRequestDir(roots: WorkspaceRoots, keyId: string, requestId: string): string {
  roots.ensureOnce(roots.root);
  const keyDir = under(roots.root, keyId);
  roots.ensureOnce(keyDir);
  const dir = under(keyDir, requestId);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    // The key folder was removed by a sweep since it was cached.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    roots.ready.delete(keyDir);
    roots.ensureOnce(keyDir);
    mkdirSync(dir, { mode: 0o700 });
  }
  return dir;
}

function toWorkspace(roots: WorkspaceRoots, dir: string, home: string, cwd: string, persistent: string): Workspace {
  let removed = false;
  return {
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
      return roots.track(roots.remover.remove(dir));
    },
  };
}

/** The home, the working directory (or a slot's stable ones) and the directories asked for in the home. */
function makeDirs(roots: WorkspaceRoots, opts: CreateOptions, ws: Workspace): void {
  mkdirSync(ws.home, { mode: 0o700 });
  if (opts.slot === undefined) mkdirSync(ws.cwd, { mode: 0o700 });
  else {
    // A slot's stable directories are made once per process (and again after a reset); one
    // stat notices a slot deleted behind olp's back (`olp sessions rotate` while it serves).
    if (roots.ready.has(ws.cwd) && !existsSync(ws.cwd)) roots.forget(roots.slotDir(opts.keyId, opts.slot));
    roots.ensureOnce(ws.cwd);
    roots.ensureOnce(ws.persistent);
  }
  for (const d of opts.dirs ?? []) mkdirSync(inside(ws.home, d), { recursive: true, mode: 0o700 });
}

/** The operator's files (and the persistent directories) linked into the home. */
function linkFiles(roots: WorkspaceRoots, opts: CreateOptions, ws: Workspace): void {
  const made = new Set<string>([ws.home]);
  for (const link of opts.links ?? []) {
    const from = link.persistent ? inside(ws.persistent, link.from) : link.from;
    // The persistent dir is made only when something lives there (slots always have one).
    if (link.persistent) {
      if (opts.slot !== undefined) roots.ensureOnce(from);
      else mkdirSync(from, { recursive: true, mode: 0o700 });
    } else if (!existsSync(from)) continue;
    const target = inside(ws.home, link.to);
    const parent = dirname(target);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true, mode: 0o700 });
      made.add(parent);
    }
    symlinkSync(from, target);
  }
}
