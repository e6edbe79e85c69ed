import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { ensurePrivateDir } from '../store/index.js';

/** A file of the operator's made visible inside a workspace home (credentials, mostly). */
export interface Link {
  /** Absolute path of the real file. */
  from: string;
  /** Path relative to the workspace home. */
  to: string;
}

/** A file written into the workspace before the spawn (e.g. a system prompt read via a `-file` flag). */
export interface WorkspaceFile {
  /** Path relative to the workspace root. */
  name: string;
  content: string;
}

export interface Workspace {
  /** Root of this workspace: `<state>/run/<keyId>/<requestId>`. */
  readonly dir: string;
  /** The child's HOME. */
  readonly home: string;
  /** The child's working directory. */
  readonly cwd: string;
  /** Absolute path of a file inside the workspace root. */
  path(name: string): string;
  /** Writes a private (0600) file inside the workspace root; never overwrites. */
  writeFile(name: string, content: string): void;
  /** Removes the workspace; safe to call more than once. */
  remove(): void;
}

const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Throwaway homes and working directories for CLI children, under `<state>/run`.
 * Knows nothing of HTTP or of any CLI: callers say what to link and what to write.
 */
export function createWorkspaces(stateDir: string) {
  const root = join(stateDir, 'run');

  function create(opts: { keyId: string; requestId: string; links?: readonly Link[] }): Workspace {
    for (const seg of [opts.keyId, opts.requestId]) {
      if (!SAFE_SEGMENT.test(seg)) throw new Error(`unsafe workspace path segment '${seg}'`);
    }
    ensurePrivateDir(root);
    const keyDir = join(root, opts.keyId);
    ensurePrivateDir(keyDir);
    const dir = join(keyDir, opts.requestId);
    mkdirSync(dir, { mode: 0o700 });
    const home = join(dir, 'home');
    const cwd = join(dir, 'work');
    let removed = false;
    const ws: Workspace = {
      dir,
      home,
      cwd,
      path: (name) => inside(dir, name),
      writeFile: (name, content) => writePrivate(inside(dir, name), content),
      remove() {
        if (removed) return;
        removed = true;
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        try {
          // The per-key folder goes too once its last workspace is gone; a concurrent request may refill it.
          if (readdirSync(keyDir).length === 0) rmSync(keyDir, { recursive: false, force: true });
        } catch {
          // Another request of the same key owns it now, or it is gone already.
        }
      },
    };
    try {
      mkdirSync(home, { mode: 0o700 });
      mkdirSync(cwd, { mode: 0o700 });
      for (const link of opts.links ?? []) {
        if (!existsSync(link.from)) continue;
        const target = inside(home, link.to);
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        symlinkSync(link.from, target);
      }
    } catch (err) {
      ws.remove();
      throw err;
    }
    return ws;
  }

  /** Removes every workspace left under `run/` (after a crash); returns how many were removed. */
  function sweep(): number {
    if (!existsSync(root)) return 0;
    let removed = 0;
    for (const key of readdirSync(root)) {
      const keyDir = join(root, key);
      let entries: string[] = [];
      try {
        entries = readdirSync(keyDir);
      } catch {
        // A stray file, not a key folder.
      }
      removed += entries.length;
      rmSync(keyDir, { recursive: true, force: true, maxRetries: 3 });
    }
    return removed;
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

  return { root, create, sweep, count };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;

function inside(base: string, rel: string): string {
  const full = resolve(base, rel);
  if (!full.startsWith(base + sep)) throw new Error(`path '${rel}' escapes the workspace`);
  return full;
}

function writePrivate(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // 'wx': never follow or overwrite something that is already there.
  writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
}

export { toChildEnv, BASE_ENV, type ChildEnvPolicy } from './env.js';
