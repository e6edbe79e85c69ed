import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A CLI session id that can go into a file-name pattern as it is (claude's UUIDs, codex's thread ids). */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9-]{7,63}$/;

/** Throws for a name that is not one plain path segment. */
export function checkSegment(seg: string): void {
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
/**
 * `join(base, seg)` for a base that is already normal (made by `join`) and a segment known to be
 * one plain name (checked, or a constant): path.join re-normalises the whole string each time.
 */
export function under(base: string, seg: string): string {
  return base.endsWith(sep) ? base + seg : base + sep + seg;
}

/** A relative path of plain names only: no empty, `.` or `..` segment, no NUL. */
const PLAIN_RELATIVE = /^(?!\.\.?(?:\/|$))(?:[^/\0]+\/(?!\.\.?(?:\/|$)))*[^/\0]+$/;

/** `base/rel` for a relative path that must stay inside base. */
export function inside(base: string, rel: string): string {
  // The common case (`.claude/projects`) needs no resolving: plain names cannot climb out of base.
  if (sep === '/' && PLAIN_RELATIVE.test(rel) && isAbsolute(base)) return under(base, rel);
  const full = resolve(base, rel);
  if (!full.startsWith(base + sep)) throw new Error(`path '${rel}' escapes the workspace`);
  return full;
}

/** Writes a private (0600) file, never following or overwriting what is there. */
export function writePrivate(path: string, content: string | Buffer, root: string): void {
  if (dirname(path) !== root) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // 'wx': never follow or overwrite something that is already there.
  writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
}
