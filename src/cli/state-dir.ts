import { accessSync, constants, mkdirSync, mkdtempSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

/** The state directory cannot be used; the message says why and what to do, on one line. */
export class StateDirError extends Error {}

const RW = constants.R_OK | constants.W_OK | constants.X_OK;

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function accessible(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** The nearest ancestor of a missing path that exists (`/` at the latest), and what it is. */
function existingAncestor(dir: string): { path: string; stats: Stats | null } {
  let path = dirname(dir);
  for (;;) {
    const stats = statOrNull(path);
    if (stats || dirname(path) === path) return { path, stats };
    path = dirname(path);
  }
}

const mode = (s: Stats) => (s.mode & 0o777).toString(8).padStart(3, '0');

/** What the failing call says, in words, with its code: "permission denied on /x (EACCES)". */
function reason(err: NodeJS.ErrnoException, dir: string): string {
  const at = err.path && err.path !== dir ? ` on ${err.path}` : '';
  switch (err.code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied${at} (${err.code})`;
    case 'ENOTDIR': {
      const anc = existingAncestor(err.path ?? dir);
      const file = anc.stats && !anc.stats.isDirectory() ? anc.path : 'a part of the path';
      return `${file} is a file, not a directory (ENOTDIR)`;
    }
    case 'EROFS':
      return `the file system is read-only (EROFS)`;
    case 'ENOSPC':
      return `no space left on the device (ENOSPC)`;
    case 'ENOENT':
      return `${err.path ? dirname(err.path) : 'its parent'} does not accept new directories (ENOENT)`;
    default:
      return err.message;
  }
}

function failure(dir: string, why: string, fix: string, cause?: unknown): StateDirError {
  return new StateDirError(
    `cannot use the state directory ${dir}: ${why}. ${fix}`,
    cause === undefined ? undefined : { cause },
  );
}

const CHOOSE = 'Choose another with --state-dir';

/**
 * Makes sure the state directory exists and is ours to write, or throws a StateDirError.
 * Missing levels are created one at a time: Node 20's recursive mkdir never returns for a
 * path it cannot create under /proc (it retries ENOENT forever).
 */
export function prepareStateDir(dir: string): void {
  const stats = statOrNull(dir);
  if (!stats) {
    const missing: string[] = [];
    for (let p = dir; !statOrNull(p) && dirname(p) !== p; p = dirname(p)) missing.unshift(p);
    for (const level of missing) {
      try {
        mkdirSync(level, { mode: 0o700 });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'EEXIST') continue;
        throw failure(
          dir,
          reason(e, dir),
          e.code === 'EACCES' || e.code === 'EPERM'
            ? `${CHOOSE} or fix the permissions of ${dirname(level)}.`
            : `${CHOOSE}.`,
          err,
        );
      }
    }
  }
  const now = statSync(dir);
  if (!now.isDirectory()) throw failure(dir, 'it is a file, not a directory', `${CHOOSE}, or move the file away.`);
  if (!accessible(dir, RW))
    throw failure(
      dir,
      `permission denied (mode ${mode(now)}, EACCES)`,
      `${CHOOSE} or fix its permissions (chmod 700 ${dir}).`,
    );
}

const OPEN_ERRORS = new Set(['EACCES', 'EPERM', 'ENOTDIR', 'EROFS', 'ENOSPC', 'ENOENT', 'EISDIR']);

/**
 * An error from opening or writing the state (the database, workspaces) as the one line a person
 * can act on, or undefined when it is about something else.
 */
export function toStateDirError(err: unknown, dir: string): StateDirError | undefined {
  if (err instanceof StateDirError) return err;
  const e = err as NodeJS.ErrnoException & { code?: string };
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) {
    const why =
      e.code === 'SQLITE_READONLY' || e.code.startsWith('SQLITE_CANTOPEN')
        ? `the database ${join(dir, 'olp.db')} cannot be opened for writing (${e.code})`
        : `${e.message} (${e.code})`;
    return failure(
      dir,
      why,
      `${CHOOSE} or fix its permissions (chmod 700 ${dir}; chmod 600 ${join(dir, 'olp.db')}*).`,
      err,
    );
  }
  if (
    typeof e?.code === 'string' &&
    OPEN_ERRORS.has(e.code) &&
    typeof e.path === 'string' &&
    (e.path === dir || e.path.startsWith(`${dir}/`))
  ) {
    return failure(dir, reason(e, dir), `${CHOOSE} or fix its permissions.`, err);
  }
  return undefined;
}

export interface StateDirReport {
  ok: boolean;
  text: string;
  fix?: string;
}

/**
 * Can a directory be made here? Tried for real (a temp dir, removed at once): access bits do not tell for /proc
 * or read-only mounts.
 */
function canCreateIn(parent: string): string | null {
  try {
    rmdirSync(mkdtempSync(join(parent, '.olp-doctor-')));
    return null;
  } catch (err) {
    return reason(err as NodeJS.ErrnoException, '');
  }
}

/**
 * `olp doctor`'s look at the state directory: what it is, its real mode, whether olp can use (or create) it.
 * Creates nothing that stays.
 */
export function inspectStateDir(dir: string): StateDirReport {
  let stats: Stats;
  try {
    stats = statSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES')
      return {
        ok: false,
        text: `${dir} cannot be reached: permission denied on a parent (EACCES)`,
        fix: `choose another with --state-dir, or let your user search its parent directories`,
      };
    const anc = existingAncestor(dir);
    if (!anc.stats)
      return {
        ok: false,
        text: `${dir} cannot be created: ${anc.path} cannot be read`,
        fix: `choose another with --state-dir`,
      };
    if (!anc.stats.isDirectory())
      return {
        ok: false,
        text: `${dir} cannot be created: ${anc.path} is a file, not a directory`,
        fix: `choose another with --state-dir, or move ${anc.path} away`,
      };
    if (!accessible(anc.path, constants.W_OK | constants.X_OK)) {
      return {
        ok: false,
        text: `${dir} cannot be created: ${anc.path} is not writable by you (mode ${mode(anc.stats)})`,
        fix: `choose another with --state-dir, or create ${dir} with mode 700 as a user who can`,
      };
    }
    const why = canCreateIn(anc.path);
    if (why)
      return {
        ok: false,
        text: `${dir} cannot be created in ${anc.path}: ${why}`,
        fix: `choose another with --state-dir`,
      };
    return { ok: true, text: `${dir} (not created yet; olp creates it with mode 700 in ${anc.path})` };
  }
  if (!stats.isDirectory())
    return {
      ok: false,
      text: `${dir} is a file, not a directory`,
      fix: `choose another with --state-dir, or move it away: mv ${dir} ${dir}.bak`,
    };
  const m = stats.mode & 0o777;
  const owner = process.getuid && stats.uid !== process.getuid() ? `, owned by uid ${stats.uid}` : '';
  if (!accessible(dir, RW))
    return {
      ok: false,
      text: `${dir} (mode ${mode(stats)}${owner}) is not writable by you`,
      fix: `chmod 700 ${dir} (as its owner), or choose another with --state-dir`,
    };
  const db = join(dir, 'olp.db');
  if (statOrNull(db) && !accessible(db, constants.R_OK | constants.W_OK))
    return {
      ok: false,
      text: `${db} is not writable by you`,
      fix: `chmod 600 ${db} (as its owner), or choose another with --state-dir`,
    };
  if (m & 0o077)
    return {
      ok: false,
      text: `${dir} (mode ${mode(stats)}${owner}) can be read by others; olp sets 700 when it next opens it`,
      fix: `chmod 700 ${dir}`,
    };
  return { ok: true, text: `${dir} (mode ${mode(stats)}${owner}, writable)` };
}
