import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findExecutable, withoutOwnBins } from '../backends/index.js';
import { FIELDS } from '../config/index.js';

/** olp's package root (this file is dist/src/cli/invocation.js). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

/** olp's package root: the checkout, or where npm installed the package. */
export function packageRoot(): string {
  return ROOT;
}

/** olp's version, from its package.json. */
export function version(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** A string as one shell word (quoted only when it needs to be). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * How the user runs olp, for the commands olp prints: `olp` when that name on PATH is this olp
 * (installed, or linked with `npm link`); from a source checkout without it, `npm run olp --`
 * (with `--prefix` when the shell is elsewhere, as npm looks for package.json from there).
 */
export function toOlpCommand(
  env: Readonly<Record<string, string | undefined>>,
  script = process.argv[1],
  cwd = process.cwd(),
): string {
  const onPath = findExecutable('olp', withoutOwnBins(env.PATH));
  if (onPath && (!script || real(onPath) === real(script))) return 'olp';
  // A published package has no tsconfig.json (package.json `files`): only a checkout builds itself.
  if (!existsSync(join(ROOT, 'tsconfig.json'))) return 'olp';
  return inside(ROOT, resolve(cwd)) ? 'npm run olp --' : `npm --prefix ${shellWord(ROOT)} run olp --`;
}

/** ` --state-dir DIR` unless the state dir is the default one: a printed command then acts on the same state. */
export function stateDirArg(stateDir: string): string {
  return resolve(stateDir) === resolve(FIELDS.stateDir.schema.parse(undefined))
    ? ''
    : ` --state-dir ${shellWord(stateDir)}`;
}
