import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import {
  ERROR_CATALOGUE,
  invalidRequest,
  ProxyError,
  routeNotFound,
  toErrorBody,
  type ErrorSpec,
} from '../../src/errors/index.js';
import { ROOT } from '../support/paths.js';

interface DocRow {
  code: string;
  status: number;
  type: string;
  retryable: boolean;
  retryAfter: number | 'varies' | undefined;
  when: string;
}

/** The table rows of docs/errors.md (`| \`code\` | status | type | retry | Retry-After | when |`). */
function documentedRows(): DocRow[] {
  return readFileSync(join(ROOT, 'docs/errors.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [, code, status, type, retry, after, ...when] = l.split('|').map((c) => c.trim());
      assert.ok(retry === 'yes' || retry === 'no', `${code}: retry column is '${retry}'`);
      return {
        code: code!.replaceAll('`', ''),
        status: Number(status),
        type: type!,
        retryable: retry === 'yes',
        retryAfter: after === 'varies' ? 'varies' : after ? Number(after) : undefined,
        when: when.join('|').trim(),
      };
    });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(full);
    return d.name.endsWith('.ts') ? [full] : [];
  });
}

describe('error catalogue', () => {
  const rows = documentedRows();
  const table: Record<string, ErrorSpec> = ERROR_CATALOGUE;

  it('docs/errors.md has exactly one row per catalogue code, and no other', () => {
    const documented = rows.map((r) => r.code);
    const dupes = documented.filter((c, i) => documented.indexOf(c) !== i);
    assert.deepEqual(dupes, [], 'codes documented twice');
    assert.deepEqual([...documented].sort(), Object.keys(table).sort());
  });

  it('each row states its code’s status, type, retry flag and Retry-After, and when it happens', () => {
    for (const row of rows) {
      const spec = table[row.code];
      if (!spec) continue; // reported by the test above
      assert.deepEqual(
        { status: row.status, type: row.type, retryable: row.retryable, retryAfter: row.retryAfter },
        { status: spec.status, type: spec.type, retryable: spec.retryable, retryAfter: spec.retryAfter },
        row.code,
      );
      assert.ok(row.when.length > 10, `${row.code}: the "when" column is empty`);
    }
  });

  it('the envelope has exactly message, type, param and code', () => {
    for (const e of [invalidRequest('x', 'messages.0.content'), routeNotFound('GET', '/x')]) {
      assert.deepEqual(Object.keys(toErrorBody(e).error), ['message', 'type', 'param', 'code']);
    }
  });

  it('a ProxyError cannot be constructed outside the factories', () => {
    const Ctor = ProxyError as unknown as new (...args: unknown[]) => ProxyError;
    assert.throws(() => new Ctor(Symbol('ProxyError'), 'invalid_json', 'x', {}), TypeError);
    assert.throws(
      () => new Ctor({ status: 200, type: 'server_error', code: 'x', message: 'x', retryable: true }),
      TypeError,
    );
  });

  it('no file under src/ outside src/errors/ contains `new ProxyError`', () => {
    const src = join(ROOT, 'src');
    const files = sourceFiles(src).filter((f) => !relative(src, f).startsWith('errors/'));
    assert.ok(files.length > 20, `only ${files.length} source files found under ${src}`);
    const offenders = files
      .filter((f) => /new\s+ProxyError\b/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    assert.deepEqual(offenders, []);
  });
});
