import { fileURLToPath } from 'node:url';
import { type Dirent, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root (tests run from dist/test/...). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FAKE_CLAUDE = join(ROOT, 'test/fixtures/bin/claude');
export const FAKE_CODEX = join(ROOT, 'test/fixtures/bin/codex');
/**
 * The real claude CLIs of the real-CLI tier: the pinned baseline (`@anthropic-ai/claude-code`) and
 * the current release (`claude-code-current`, an npm alias; bump it with
 * `npm install -D -E claude-code-current@npm:@anthropic-ai/claude-code@latest`). Both packages
 * name their bin `claude`, so node_modules/.bin/claude is either: they are addressed directly.
 */
export const CLAUDE_BASELINE = join(ROOT, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe');
export const CLAUDE_CURRENT = join(ROOT, 'node_modules/claude-code-current/bin/claude.exe');
const current = process.env.OLP_TEST_CLAUDE === 'current';
/** The claude this test process runs: the baseline, or the current release with OLP_TEST_CLAUDE=current. */
export const REAL_CLAUDE = current ? CLAUDE_CURRENT : CLAUDE_BASELINE;
/** Its version, for test names. */
export const REAL_CLAUDE_VERSION = (() => {
  try {
    return (
      JSON.parse(
        readFileSync(
          join(
            ROOT,
            current
              ? 'node_modules/claude-code-current/package.json'
              : 'node_modules/@anthropic-ai/claude-code/package.json',
          ),
          'utf8',
        ),
      ) as { version: string }
    ).version;
  } catch {
    return 'missing';
  }
})();
/** The native codex binary (the npm wrapper is a Node process that would stand between olp and it). */
export const REAL_CODEX = join(ROOT, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
export const REFERENCE = join(ROOT, 'test/fixtures/reference');
export const OLP_BIN = join(ROOT, 'dist/src/cli/main.js');

/**
 * Every path under `dir`, relative to it (as `readdirSync(dir, { recursive: true })`), that still
 * exists as it is read: a folder a running CLI takes away meanwhile (a lock, a run's home) is
 * skipped instead of failing the walk.
 */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      out.push(path);
      if (e.isDirectory()) walk(path);
    }
  };
  walk('');
  return out;
}
