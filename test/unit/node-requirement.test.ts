// The Node version the README asks for is the one package.json declares, and every package olp
// and its test suite install accepts it, or the README says which one does not and why it works.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/paths.js';

type Version = [number, number, number];

function parse(v: string): Version {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
  return [a, b, c];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether a version satisfies an npm `engines` range: the forms packages use (`>=20`, `^18.19.0 || >=20.5.0`, `20.x || 22.x`, `>= 18`). */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alternative) => {
    const comparators = alternative
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return comparators.every((c) => {
      const m = /^([<>]=?|=|\^|~)?v?([\d.x*]+)$/.exec(c);
      if (!m) return c === '*';
      const [, op = '', raw] = m;
      const parts = raw!.split('.');
      const wild = parts.findIndex((p) => p === 'x' || p === '*');
      const base = parse(parts.map((p) => (p === 'x' || p === '*' ? '0' : p)).join('.'));
      const given = wild === -1 ? parts.length : wild;
      const upper = (level: number): Version =>
        level === 0 ? [base[0] + 1, 0, 0] : level === 1 ? [base[0], base[1] + 1, 0] : [base[0], base[1], base[2] + 1];
      switch (op) {
        case '>=':
          return compare(v, base) >= 0;
        case '>':
          return compare(v, base) > 0;
        case '<=':
          return compare(v, base) <= 0;
        case '<':
          return compare(v, base) < 0;
        case '^':
          return compare(v, base) >= 0 && compare(v, upper(base[0] > 0 ? 0 : 1)) < 0;
        case '~':
          return compare(v, base) >= 0 && compare(v, upper(given >= 2 ? 1 : 0)) < 0;
        default:
          // `20`, `20.x`, `20.11.x`, `=20.11.0`: that much of the version fixed.
          return given >= 3 ? compare(v, base) === 0 : compare(v, base) >= 0 && compare(v, upper(given - 1)) < 0;
      }
    });
  });
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('the Node requirement', () => {
  it('reads npm ranges as npm does', () => {
    assert.ok(satisfies('20.11.0', '>=20.11'));
    assert.ok(!satisfies('20.10.9', '>=20.11'));
    assert.ok(satisfies('20.11.0', '^18.19.0 || >=20.5.0'));
    assert.ok(satisfies('20.11.0', '20.x || 22.x || 23.x'));
    assert.ok(!satisfies('21.0.0', '20.x || 22.x'));
    assert.ok(satisfies('20.11.0', '>= 18'));
    assert.ok(!satisfies('20.11.0', '>=22.0.0'));
    assert.ok(satisfies('20.11.0', '^16 || ^18 || >=20'));
    assert.ok(!satisfies('20.11.0', '^18.19.0'));
    assert.ok(satisfies('20.11.0', '~20.11.0'));
  });

  it("the README's Node version is package.json's engines.node", () => {
    const declared = /^>=\s*(\d+\.\d+)(?:\.0)?$/.exec(pkg.engines.node);
    assert.ok(declared, `engines.node is '${pkg.engines.node}'`);
    assert.match(readme, new RegExp(`^Node ${declared[1]!.replace('.', '\\.')} or newer for olp itself`, 'm'));
  });

  it('every package installed with olp accepts that Node, or the README names it', () => {
    const minimum = `${/(\d+\.\d+(?:\.\d+)?)/.exec(pkg.engines.node)![1]!}`;
    const refusing: string[] = [];
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
      let engines: string | undefined;
      try {
        engines = (
          JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
            engines?: { node?: string };
          }
        ).engines?.node;
      } catch {
        continue; // not installed here (an optional one): nothing to check
      }
      if (engines && !satisfies(minimum, engines)) refusing.push(name);
    }
    const unexplained = refusing.filter((name) => !readme.includes(`\`${name}\``));
    assert.deepEqual(
      unexplained,
      [],
      `packages whose engines refuse Node ${minimum}: ${refusing.join(', ')}; the README must say what that means for them`,
    );
  });
});
