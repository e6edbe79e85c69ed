// olp as a package: what `npm pack` puts in the tarball, that dist needs nothing from devDependencies,
// and `npm install -g` of it into an empty prefix: olp on PATH working from any directory (keys, doctor,
// serve answering), an upgrade over an older install keeping the state dir's keys, and a machine
// without a compiler getting Node's spawn instead of the native starter. npm works from its cache
// (--prefer-offline, filled by `npm ci`); better-sqlite3's install takes the checkout's own build as a
// local prebuilt binary, instead of compiling SQLite for a minute.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { FAKE_CLAUDE, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-package-'));
after(() => rmSync(base, { recursive: true, force: true }));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const NATIVE_BUILT = existsSync(join(ROOT, 'src/native/build/Release/olp_spawn.node'));

/** npm's own entry (npm-cli.js), to run it with a PATH that has no npm; null when npm is not found. */
function npmCli(): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      const real = realpathSync(join(dir, 'npm'));
      if (real.endsWith('npm-cli.js')) return real;
    } catch {}
  }
  return null;
}
const NPM = npmCli();

/** The environment without npm's own variables (set when the suite runs under `npm test`). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^npm_/i.test(k) && !k.startsWith('OLP_')) env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    cwd: opts.cwd ?? base,
    env: opts.env ?? cleanEnv(),
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.error?.message ?? ''}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** better-sqlite3's prebuilt binary made from the checkout's build, named as prebuild-install looks for it. */
function localPrebuilds(): Record<string, string> {
  const dir = join(base, 'prebuilds');
  const version = (
    JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }
  ).version;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const glibc = process.platform !== 'linux' || report?.header?.glibcVersionRuntime;
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('tar', [
    '-czf',
    join(dir, asset),
    '-C',
    join(ROOT, 'node_modules/better-sqlite3'),
    'build/Release/better_sqlite3.node',
  ]);
  return r.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: dir } : {};
}

let tarball = '';
let oldTarball = '';
let packed: string[] = [];
let prebuilds: Record<string, string> = {};

/** `npm install -g` of a tarball into `prefix`, from npm's cache. */
function install(prefix: string, tgz: string, env = cleanEnv(prebuilds)) {
  return run(
    process.execPath,
    [
      NPM!,
      'install',
      '-g',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--foreground-scripts',
      '--allow-scripts=olp,better-sqlite3',
      tgz,
    ],
    { env },
  );
}

/** The installed olp, run from a directory that is no checkout, its state in `stateDir`. */
function olp(prefix: string, args: string[], stateDir: string) {
  const env = {
    PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: join(base, 'home'),
    OLP_STATE_DIR: stateDir,
  };
  return spawnSync(join(prefix, 'bin/olp'), args, { encoding: 'utf8', cwd: base, env, timeout: 60_000 });
}

before(() => {
  if (!NPM) return;
  // dist is built (the tests run from it): --ignore-scripts skips prepack's rebuild under the running suite.
  const r = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: ROOT });
  const [info] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(base, info!.filename);
  packed = info!.files.map((f) => f.path);
  // The "previous release": the same tarball as version 0.0.9.
  const old = join(base, 'old');
  mkdirSync(old);
  run('tar', ['-xzf', tarball, '-C', old]);
  const manifest = join(old, 'package/package.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(`"version": "${pkg.version}"`, '"version": "0.0.9"'));
  oldTarball = join(base, 'olp-0.0.9.tgz');
  run('tar', ['-czf', oldTarball, '-C', old, 'package']);
  prebuilds = localPrebuilds();
});

const skip = NPM ? false : 'npm was not found on PATH';

/** A module's import and export-from statements, `import('x')` and `require('x')` of a literal name. */
const IMPORTS =
  /^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\b(?:import|require)\(\s*['"]([^'"$]+)['"]\s*\)/gm;

describe('the package npm pack makes', { skip }, () => {
  it('holds the built dist, the native starter’s sources and its build script; no tests, no maps', () => {
    for (const f of [
      'dist/src/cli/main.js',
      'scripts/build-native.mjs',
      'src/native/spawn.c',
      'src/native/binding.gyp',
      'docs/service.md',
      'CONTRIBUTING.md',
      'package.json',
    ])
      assert.ok(packed.includes(f), f);
    const stray = packed.filter((f) =>
      /^(dist\/(test|scripts)|test|src\/(?!native\/(spawn\.c|binding\.gyp)$))|\.map$|\.ts$/.test(f),
    );
    assert.deepEqual(stray, []);
    assert.equal(pkg.scripts.prepack, 'npm run build', 'npm pack builds dist first');
    for (const script of ['preinstall', 'install', 'postinstall']) {
      const file = /node (\S+)/.exec(pkg.scripts[script] ?? '')?.[1];
      if (file) assert.ok(packed.includes(file), `the ${script} script's ${file} is in the package`);
    }
  });

  it('dist needs only node built-ins and the runtime dependencies', () => {
    const used = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.js'))
          for (const m of readFileSync(p, 'utf8').matchAll(IMPORTS)) {
            const spec = (m[1] ?? m[2] ?? m[3])!;
            if (spec.startsWith('.') || spec.startsWith('/') || isBuiltin(spec)) continue;
            used.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
          }
      }
    };
    walk(join(ROOT, 'dist/src'));
    assert.ok(used.has('express'), 'the scan finds imports');
    assert.deepEqual(
      [...used].filter((u) => !(u in pkg.dependencies)),
      [],
    );
  });
});

/** Package names installed under a node_modules, nested ones too. */
function installedNames(dir: string, out = new Set<string>()): Set<string> {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir)) {
    if (e.startsWith('.')) continue;
    const names = e.startsWith('@') ? readdirSync(join(dir, e)).map((s) => `${e}/${s}`) : [e];
    for (const n of names) {
      out.add(n);
      installedNames(join(dir, n, 'node_modules'), out);
    }
  }
  return out;
}

describe('npm install -g of the package', { skip }, () => {
  const prefix = join(base, 'prefix');
  const stateDir = join(base, 'state');
  let token = '';

  it('an older release installs; its olp makes a key from any directory', () => {
    install(prefix, oldTarball);
    assert.equal(olp(prefix, ['--version'], stateDir).stdout, '0.0.9\n');
    const r = olp(prefix, ['keys', 'add', 'me'], stateDir);
    assert.equal(r.status, 0, r.stderr);
    token = r.stdout.trim().split('\n').at(-1)!;
    assert.match(token, /^olpk_/);
  });

  it('this one installs over it: the new version, only runtime dependencies', () => {
    install(prefix, tarball);
    assert.equal(olp(prefix, ['--version'], stateDir).stdout, `${pkg.version}\n`);
    assert.equal(olp(prefix, ['version'], stateDir).stdout, `${pkg.version}\n`);
    const installed = installedNames(join(prefix, 'lib/node_modules/olp/node_modules'));
    assert.ok(installed.has('express') && installed.has('better-sqlite3'));
    const devOnly = [
      'typescript',
      '@biomejs/biome',
      'supertest',
      'openai',
      '@anthropic-ai/claude-code',
      '@openai/codex',
      'playwright-core',
    ];
    assert.deepEqual(
      devOnly.filter((d) => installed.has(d)),
      [],
    );
  });

  it('olp doctor works there, with the native starter where the checkout could build it', () => {
    const r = olp(prefix, ['doctor', '--claude-bin', FAKE_CLAUDE, '--port', '0'], stateDir);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    if (NATIVE_BUILT) assert.match(r.stdout, /spawning\s+ok\s+posix_spawn/);
  });

  it('olp serve answers /health and /v1/models with the key the older release made', async () => {
    const env = {
      PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: join(base, 'home'),
      OLP_STATE_DIR: stateDir,
    };
    const child = spawn(join(prefix, 'bin/olp'), ['serve', '--port', '0', '--claude-bin', FAKE_CLAUDE], {
      cwd: base,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const [url] = (await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()).value.split(
        ' ',
      ) as string[];
      const origin = new URL(url!).origin;
      assert.equal((await fetch(`${origin}/health`)).status, 200);
      const models = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(models.status, 200);
      assert.ok(((await models.json()) as { data: unknown[] }).data.length > 0);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('without a compiler the install still succeeds, and olp starts CLIs with Node’s spawn', () => {
    // PATH with node and sh only: no cc, g++, make or python3 for node-gyp.
    const bin = join(base, 'bare-bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const bare = join(base, 'bare-prefix');
    const r = install(bare, tarball, cleanEnv({ ...prebuilds, PATH: bin }));
    assert.match(r.stdout + r.stderr, /native process starter was not built/);
    const doctor = olp(bare, ['doctor', '--claude-bin', FAKE_CLAUDE, '--port', '0'], join(base, 'bare-state'));
    assert.equal(doctor.status, 0, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, /spawning\s+slower\s+Node's child_process \(the native starter was not built/);
  });
});
