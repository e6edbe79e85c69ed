import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** The absolute path an executable name resolves to on PATH (or the path itself), if it is runnable. */
export function findExecutable(bin: string, pathEnv: string | undefined): string | undefined {
  const candidates = bin.includes('/') ? [isAbsolute(bin) ? bin : resolve(bin)] : (pathEnv ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, bin));
  for (const file of candidates) {
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}
