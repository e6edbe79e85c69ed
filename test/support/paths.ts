import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (tests run from dist/test/...). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FAKE_CLAUDE = join(ROOT, 'test/fixtures/bin/claude');
export const FAKE_CODEX = join(ROOT, 'test/fixtures/bin/codex');
export const REAL_CLAUDE = join(ROOT, 'node_modules/.bin/claude');
/** The native codex binary (the npm wrapper is a Node process that would stand between olp and it). */
export const REAL_CODEX = join(ROOT, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
export const REFERENCE = join(ROOT, 'test/fixtures/reference');
export const OLP_BIN = join(ROOT, 'dist/src/cli/main.js');
