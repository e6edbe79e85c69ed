// scripts/check-native.mjs decides whether better-sqlite3 can be installed with nothing downloaded but npm
// packages. It runs here as it does before `npm install`: a copy beside a lockfile in a temp folder
// (no node_modules), with the machine it looks at made up: PATH, npm's cache, npm's nodedir, Node's headers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-check-native-'));
after(() => rmSync(base, { recursive: true, force: true }));

const VERSION = '12.11.1';
const project = join(base, 'project');
mkdirSync(join(project, 'scripts'), { recursive: true });
copyFileSync(join(ROOT, 'scripts/check-native.mjs'), join(project, 'scripts/check-native.mjs'));
writeFileSync(
  join(project, 'package-lock.json'),
  JSON.stringify({ packages: { 'node_modules/better-sqlite3': { version: VERSION } } }),
);

/** A folder of executables that only exist (a build would need them to work; the check only looks). */
function tools(name: string, names: string[]): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  for (const n of names) {
    writeFileSync(join(dir, n), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, n), 0o755);
  }
  return dir;
}

/** A Node headers folder as node-gyp takes it (`<prefix>/include/node`), for Node `version`. */
function headers(name: string, version: string): string {
  const inc = join(base, name, 'include/node');
  mkdirSync(inc, { recursive: true });
  const [major, minor, patch] = version.split('.');
  writeFileSync(join(inc, 'node.h'), '');
  writeFileSync(join(inc, 'common.gypi'), '{}');
  writeFileSync(
    join(inc, 'node_version.h'),
    `#define NODE_MAJOR_VERSION ${major}\n#define NODE_MINOR_VERSION ${minor}\n#define NODE_PATCH_VERSION ${patch}\n`,
  );
  return join(base, name);
}

const ALL_TOOLS = tools('all-tools', ['g++', 'cc', 'make', 'python3']);
const NO_TOOLS = tools('no-tools', []);

function check(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [join(project, 'scripts/check-native.mjs')], {
    encoding: 'utf8',
    // npm's nodedir is always given (empty: not set), so the check never asks npm for it.
    env: { HOME: base, XDG_CACHE_HOME: join(base, 'no-cache'), npm_config_cache: join(base, 'npm-cache'), ...env },
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('npm run check-native', () => {
  it("a prebuilt binary in npm's cache for this Node and platform: nothing to download or build", () => {
    const cache = join(base, 'npm-cache-hit');
    mkdirSync(join(cache, '_prebuilds'), { recursive: true });
    const asset = `better-sqlite3-v${VERSION}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    writeFileSync(join(cache, '_prebuilds', `a1b2c3-${asset}`), '');
    const r = check({ PATH: NO_TOOLS, npm_config_nodedir: '', npm_config_cache: cache });
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /its prebuilt binary is in npm's cache/);
  });

  it('no toolchain and no headers: exit 1, each missing piece named, and the packages that bring them', () => {
    const r = check({ PATH: NO_TOOLS, npm_config_nodedir: '' });
    assert.equal(r.status, 1, r.out);
    for (const what of ['C\\+\\+ compiler \\(g\\+\\+\\)', 'C compiler \\(cc\\)', 'make', 'Python 3 \\(python3\\)'])
      assert.match(r.out, new RegExp(`^ {2}MISSING {2}${what}$`, 'm'));
    assert.match(r.out, /MISSING {2}Node's headers: none local; node-gyp downloads them from nodejs\.org/);
    assert.match(r.out, /Unless npm can download the prebuilt binary from GitHub, npm install fails here/);
    assert.match(r.out, /apt-get install build-essential python3/);
    assert.match(r.out, /npm_config_nodedir=\S+ npm install/);
  });

  it("a toolchain, and npm's nodedir naming this Node's headers: a build from source works offline", () => {
    const r = check({ PATH: ALL_TOOLS, npm_config_nodedir: headers('headers-same', process.versions.node) });
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /ok {7}Node's headers: npm's nodedir .*headers-same/);
    assert.match(r.out, /A build from source can work here without downloading anything but npm packages/);
  });

  it("a toolchain but no local headers: exit 1, pointing npm's nodedir at headers", () => {
    const r = check({ PATH: ALL_TOOLS, npm_config_nodedir: '' });
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /Unless npm can download the prebuilt binary from GitHub or Node's headers from nodejs\.org/);
    assert.match(r.out, /npm_config_nodedir=\S+ npm install/);
    assert.doesNotMatch(r.out, /build-essential/, 'the toolchain is there');
  });

  it("node-gyp's own cache of this Node's headers will do", () => {
    const cache = join(base, 'xdg');
    headers(join('xdg', 'node-gyp', process.versions.node), process.versions.node);
    const r = check({ PATH: ALL_TOOLS, npm_config_nodedir: '', XDG_CACHE_HOME: cache });
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /ok {7}Node's headers: node-gyp's cache/);
  });

  it("npm's nodedir with another Node major's headers is wrong", () => {
    const other = `${Number(process.versions.node.split('.')[0]) + 1}.0.0`;
    const r = check({ PATH: ALL_TOOLS, npm_config_nodedir: headers('headers-other', other) });
    assert.equal(r.status, 1, r.out);
    assert.match(
      r.out,
      new RegExp(`WRONG {4}Node's headers: npm's nodedir .*\\(Node ${other.replace(/\./g, '\\.')}; this is Node`),
    );
  });
});
