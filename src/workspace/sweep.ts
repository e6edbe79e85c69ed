import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { killByHome } from '../process/index.js';

/** The folders a sweep looks in: the run dir, where workspaces lived before it, the slots. */
export interface SweepRoots {
  root: string;
  legacyRoot: string;
  slotsRoot: string;
}

/**
 * Removes every workspace left under `run/` by an earlier process that died without cleaning
 * up, first killing every process whose HOME lies under `run/` (found by its environment, so
 * one that left its process group is found too). Returns how many workspaces and processes.
 */
export function sweepWorkspaces(dirs: SweepRoots): { workspaces: number; processes: number } {
  const { root, legacyRoot, slotsRoot } = dirs;
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
      for (const e of list(join(slotsRoot, key, slot)))
        if (e.includes('.discarded-'))
          rmSync(join(slotsRoot, key, slot, e), { recursive: true, force: true, maxRetries: 3 });
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

/** Workspaces currently on disk (for leak checks and health). */
export function countWorkspaces(root: string): number {
  if (!existsSync(root)) return 0;
  return readdirSync(root).reduce((n, key) => {
    try {
      return n + readdirSync(join(root, key)).length;
    } catch {
      return n;
    }
  }, 0);
}
