// The Node version the README asks for is the one package.json declares, and every package olp
// and its test suite install accepts it, or the README or CONTRIBUTING.md (for the suite's own
// packages) says which one does not and why it works.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';
import { ROOT } from '../support/paths.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');

describe('the Node requirement', () => {
  it("the README's Node version is package.json's engines.node", () => {
    const declared = /^>=\s*(\d+\.\d+)(?:\.0)?$/.exec(pkg.engines.node);
    assert.ok(declared, `engines.node is '${pkg.engines.node}'`);
    assert.match(readme, new RegExp(`^Node ${declared[1]!.replace('.', '\\.')} or newer for olp itself`, 'm'));
  });

  it('every package installed with olp accepts that Node, or the README or CONTRIBUTING.md names it', () => {
    // The lowest Node engines.node lets in (`>=20.11` → 20.11.0), checked against each range as npm reads it.
    const minimum = semver.minVersion(pkg.engines.node)!.version;
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
      if (engines && !semver.satisfies(minimum, engines)) refusing.push(name);
    }
    const unexplained = refusing.filter((name) => ![readme, contributing].some((t) => t.includes(`\`${name}\``)));
    assert.deepEqual(
      unexplained,
      [],
      `packages whose engines refuse Node ${minimum}: ${refusing.join(', ')}; the README or CONTRIBUTING.md must say what that means for them`,
    );
  });
});
