import { chmodSync, mkdirSync, statSync } from 'node:fs';

/** Creates a directory (and parents) owned by us with mode 0700, tightening it if it already existed. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} exists and is not a directory`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}
