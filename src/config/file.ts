import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Changes keys of `<stateDir>/config.json` atomically (temp file, fsync, rename): a failed write
 * leaves the old file whole. `undefined` removes a key.
 */
export function updateConfigFile(stateDir: string, patch: Record<string, unknown>): void {
  const file = join(stateDir, 'config.json');
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`${file} is not valid JSON; fix or remove it first`);
  }
  const next = { ...current, ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(next, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** The settings in `<stateDir>/config.json`; problems reading it go into `problems`. */
export function readConfigFile(file: string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    problems.push(`${file}: cannot read (${(err as Error).message})`);
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    problems.push(`${file}: expected a JSON object`);
  } catch (err) {
    problems.push(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return {};
}
