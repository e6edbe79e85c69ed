import { createWorkspace } from './create.js';
import { WorkspaceRoots } from './roots.js';
import type { CreateOptions, Workspace } from './types.js';

export { toChildEnv, BASE_ENV, type ChildEnvPolicy } from './env.js';
export { runDirFor } from './paths.js';
export type { CreateOptions, Link, SlotReset, Workspace, WorkspaceFile } from './types.js';

/**
 * Homes and working directories for CLI children: throwaway ones under the run dir (see
 * `runDirFor`), stable per-slot ones under `<state>/slots`. Knows nothing of HTTP or of any CLI:
 * callers say what to link, what to write and whether they need a stable place.
 */
export function createWorkspaces(stateDir: string, opts: { runDir?: string; path?: string | undefined } = {}) {
  const w = new WorkspaceRoots(stateDir, opts);
  return {
    root: w.root,
    slotsRoot: w.slotsRoot,
    create: (o: CreateOptions): Workspace => createWorkspace(w, o),
    sweep: w.sweep.bind(w),
    resetSlot: w.resetSlot.bind(w),
    prunes: w.prunes.bind(w),
    pruneSession: w.pruneSession.bind(w),
    removeSlot: w.removeSlot.bind(w),
    count: w.count.bind(w),
    settled: w.settled.bind(w),
    close: w.close.bind(w),
  };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;
