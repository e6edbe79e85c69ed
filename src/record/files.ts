import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ensurePrivateDir } from '../store/index.js';
import { parseRecording, RECORDING_FORMAT, type Recording, type Row } from './format.js';

const MANAGED_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;

/** Where recordings live: `<state>/recordings`, mode 0700, files 0600. */
export function recordingsDir(stateDir: string): string {
  return join(stateDir, 'recordings');
}

/** Refuses anything but a regular file of ours that only we can read (fails closed). */
export function checkPrivateFile(file: string): void {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    throw new Error(`recording ${file} does not exist`);
  }
  if (st.isSymbolicLink()) throw new Error(`recording ${file} is a symbolic link; olp refuses to follow it`);
  if (!st.isFile()) throw new Error(`recording ${file} is not a regular file`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid())
    throw new Error(`recording ${file} belongs to another user`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(`recording ${file} has mode ${(st.mode & 0o777).toString(8)}; it must be 600 (chmod 600 ${file})`);
}

function checkPrivateDir(dir: string): void {
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${dir} must be a real directory, not a link`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(`${dir} has mode ${(st.mode & 0o777).toString(8)}; it must be 700 (chmod 700 ${dir})`);
}

/** The file of a managed recording id; refuses ids that could reach outside the directory. */
export function managedPath(stateDir: string, id: string): string {
  const clean = id.endsWith('.jsonl') ? id.slice(0, -'.jsonl'.length) : id;
  if (!MANAGED_ID.test(clean) || clean.includes('..'))
    throw new Error(`'${id}' is not a valid recording id (letters, digits, '.', '_', '-')`);
  return join(recordingsDir(stateDir), `${clean}.jsonl`);
}

/** An id of the managed directory, or a path to any recording file (for replay). */
export function resolveRecording(stateDir: string, idOrPath: string): { file: string; managed: boolean } {
  if (idOrPath.includes('/')) return { file: resolve(idOrPath), managed: false };
  return { file: managedPath(stateDir, idOrPath), managed: true };
}

/** Reads and validates a whole recording; managed files are permission-checked first. */
export function loadRecording(stateDir: string, idOrPath: string): Recording & { file: string } {
  const { file, managed } = resolveRecording(stateDir, idOrPath);
  if (managed) {
    checkPrivateDir(recordingsDir(stateDir));
    checkPrivateFile(file);
  } else {
    const st = lstatSync(file);
    if (st.isSymbolicLink() || !st.isFile()) throw new Error(`${file} must be a regular file, not a link`);
  }
  return { ...parseRecording(readFileSync(file, 'utf8')), file };
}

/** Managed recordings with their size and call count, newest first. */
export function listRecordings(
  stateDir: string,
): { id: string; file: string; bytes: number; modified: string; calls: number | null; valid: boolean }[] {
  const dir = recordingsDir(stateDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => {
      const file = join(dir, f);
      const st = lstatSync(file);
      let calls: number | null = null;
      let valid = false;
      try {
        checkPrivateFile(file);
        calls = parseRecording(readFileSync(file, 'utf8')).calls.length;
        valid = true;
      } catch {
        // listed, marked invalid
      }
      return { id: basename(f, '.jsonl'), file, bytes: st.size, modified: st.mtime.toISOString(), calls, valid };
    })
    .sort((a, b) => b.modified.localeCompare(a.modified));
}

/** Creates a new managed recording with just its header (0600 in a 0700 dir); refuses to overwrite. */
export function createRecording(stateDir: string, id: string, olpVersion: string): string {
  ensurePrivateDir(recordingsDir(stateDir));
  const file = managedPath(stateDir, id);
  const header: Row = {
    type: 'header',
    format: RECORDING_FORMAT,
    olp_version: olpVersion,
    created: new Date().toISOString(),
  };
  writeFileSync(file, `${JSON.stringify(header)}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}

export function deleteRecording(stateDir: string, id: string): void {
  const file = managedPath(stateDir, id);
  checkPrivateFile(file);
  rmSync(file);
}

/**
 * An open recording for appending: O_APPEND, one whole line per write, fsync at each call's end,
 * and a lock file so a second process cannot record into the same file.
 */
export function openAppender(file: string) {
  checkPrivateDir(resolve(file, '..'));
  checkPrivateFile(file);
  const existing = parseRecording(readFileSync(file, 'utf8'));
  const lock = `${file}.lock`;
  takeLock(lock);
  const fd = openSync(file, 'a', 0o600);
  let next = existing.calls.length;
  let closed = false;
  return {
    file,
    /** The index of a new call. */
    nextIndex: () => next++,
    write(row: Row, sync = false): void {
      if (closed) return;
      writeSync(fd, `${JSON.stringify(row)}\n`);
      if (sync) fsyncSync(fd);
    },
    close(): void {
      if (closed) return;
      closed = true;
      fsyncSync(fd);
      closeSync(fd);
      rmSync(lock, { force: true });
    },
  };
}

export type Appender = ReturnType<typeof openAppender>;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function takeLock(lock: string): void {
  try {
    writeFileSync(lock, String(process.pid), { mode: 0o600, flag: 'wx' });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(readFileSync(lock, 'utf8'));
  if (Number.isInteger(holder) && alive(holder))
    throw new Error(`recording ${lock.slice(0, -5)} is being written by process ${holder}`);
  // A lock left by a process that is gone.
  rmSync(lock, { force: true });
  writeFileSync(lock, String(process.pid), { mode: 0o600, flag: 'wx' });
}
