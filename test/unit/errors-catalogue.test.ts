import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { errorCatalogue, toErrorBody } from '../../src/errors/index.js';
import { ROOT } from '../support/paths.js';

it('docs/errors.md lists every error with its exact status, type, retry flag and Retry-After', () => {
  const rows = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => l.split('|').map((c) => c.trim()));
  const documented = new Map(rows.map((r) => [r[1]!.replaceAll('`', ''), { status: Number(r[2]), type: r[3], retry: r[4] === 'yes', after: r[5] === 'varies' ? 'varies' : r[5] ? Number(r[5]) : undefined }]));
  const actual = errorCatalogue();
  assert.deepEqual([...documented.keys()].sort(), [...new Set(actual.map((e) => e.code))].sort());
  for (const e of actual) {
    const doc = documented.get(e.code);
    const after = doc?.after === 'varies' && e.retryAfter !== undefined ? 'varies' : e.retryAfter;
    assert.deepEqual(doc, { status: e.status, type: e.type, retry: e.retryable, after }, e.code);
    assert.deepEqual(Object.keys(toErrorBody(e).error), ['message', 'type', 'param', 'code']);
  }
});
