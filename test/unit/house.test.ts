// The house rules of src/, checked from the sources' text: folder doors, no import circles, files of at most
// 250 lines, process.env read only in cli/ and config/; and, parsed by the TypeScript compiler, functions of
// at most 80 lines. The lists below are the violations the tree had when the rules were written down; a new
// violation fails, and so does an entry that no longer violates (delete it: a function split to 80 lines or
// fewer, or gone), so the lists only shrink.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  envReads,
  folderOf,
  functionKey,
  MAX_FUNCTION_LINES,
  functionLengths,
  importCircles,
  readSrc,
} from '../../scripts/house.js';
import { ROOT } from '../support/paths.js';

/** `from → to`: a relative import of another top-level folder's inner file instead of its index.ts. */
const ALLOWED_PAST_DOORS = [
  // On purpose: the heap settings load before anything else of olp (the door would load it all first).
  'cli/main.ts → process/heap.ts',
];

/** Import circles among src files (type-only imports included), each as its files sorted, joined by ' ↔ '. */
const ALLOWED_CIRCLES: string[] = [];

/** src files over 250 lines. */
const ALLOWED_LONG_FILES: string[] = [];

/** Files outside cli/ and config/ that read process.env. */
const ALLOWED_ENV_READERS: string[] = [];

/** `path#name` (scripts/house.ts functionKey) of functions over 80 lines: none (CONVENTIONS 30). */
const ALLOWED_LONG_FUNCTIONS: string[] = [];

const MAX_LINES = 250;
const ENV_FOLDERS = ['cli', 'config'];

const files = readSrc(join(ROOT, 'src'));
const functions = functionLengths(join(ROOT, 'src'), files);

/** Fails naming what is new against the allow-list and what on the list no longer happens. */
function checkAgainst(rule: string, found: string[], allowed: string[], fix: string): void {
  const now = new Set(found);
  const added = [...now].filter((v) => !allowed.includes(v)).sort();
  const gone = allowed.filter((v) => !now.has(v));
  const report = [
    ...(added.length > 0 ? [`new ${rule} (${fix}):`, ...added.map((v) => `  ${v}`)] : []),
    ...(gone.length > 0 ? [`${rule} on the allow-list no longer found (delete them from it):`] : []),
    ...gone.map((v) => `  ${v}`),
  ];
  assert.ok(report.length === 0, report.join('\n'));
}

describe('house rules of src/', () => {
  it('reads the src tree', () => {
    assert.ok(files.length > 50, `found only ${files.length} src files under ${join(ROOT, 'src')}`);
  });

  it('imports another folder only through its index.ts', () => {
    const found = files.flatMap((f) =>
      f.imports
        .filter((i) => {
          const to = folderOf(i.target);
          return to !== '' && to !== folderOf(f.path) && i.target !== `${to}/index.ts`;
        })
        .map((i) => `${f.path} → ${i.target}`),
    );
    checkAgainst('imports past a folder door', found, ALLOWED_PAST_DOORS, "import the folder's index.js");
  });

  it('has no import circles', () => {
    const found = importCircles(files).map((c) => c.join(' ↔ '));
    checkAgainst('import circles', found, ALLOWED_CIRCLES, 'break the circle');
  });

  it(`keeps src files at ${MAX_LINES} lines or fewer`, () => {
    const found = files.filter((f) => f.lines.length > MAX_LINES).map((f) => f.path);
    checkAgainst(`files over ${MAX_LINES} lines`, found, ALLOWED_LONG_FILES, 'split along a seam');
  });

  it(`has no function in src/ over ${MAX_FUNCTION_LINES} lines`, () => {
    assert.ok(functions.length > 500, `found only ${functions.length} functions in src/`);
    const found = functions.filter((f) => f.lines > MAX_FUNCTION_LINES).map(functionKey);
    checkAgainst(
      `functions over ${MAX_FUNCTION_LINES} lines`,
      found,
      ALLOWED_LONG_FUNCTIONS,
      'move its steps into named functions',
    );
  });

  it('reads process.env only in cli/ and config/', () => {
    const found = files
      .filter((f) => !ENV_FOLDERS.includes(folderOf(f.path)) && envReads(f).length > 0)
      .map((f) => f.path);
    checkAgainst('process.env readers', found, ALLOWED_ENV_READERS, 'take the value from config');
  });
});
