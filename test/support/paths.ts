import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (tests run from dist/test/...). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FAKE_CLAUDE = join(ROOT, 'test/fixtures/bin/claude');
export const REAL_CLAUDE = join(ROOT, 'node_modules/.bin/claude');
export const REFERENCE = join(ROOT, 'test/fixtures/reference');
export const OLP_BIN = join(ROOT, 'dist/src/cli/main.js');
