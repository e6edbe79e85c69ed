#!/usr/bin/env node
// Can better-sqlite3, olp's one native dependency, be installed here with nothing downloaded but npm
// packages? npm's install of it takes a prebuilt binary from GitHub, else builds it from source with
// node-gyp, which needs a C/C++ toolchain, make, Python 3 and Node's headers; the headers are
// downloaded from nodejs.org unless npm's `nodedir` names a local copy. Where neither site can be
// reached, `npm install` fails, after minutes of retries, with gyp's "network connectivity" error.
//
// npm offers no step of a project's own before its dependencies' install scripts (npm 10 and 11
// run the root's `preinstall` after them, and not at all once one has failed), so this is run by
// hand: `npm run check-native`, before `npm install` or after it failed. Node's built-ins only: it
// runs before anything is installed. Exit 0 when the install can work offline (a prebuilt binary in
// npm's cache, or everything a build from source needs), 1 otherwise, with the fix.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;

/** An executable named `name` on PATH (a path is taken as it is), or null. */
function which(name) {
  const candidates = name.includes('/') ? [name] : (env.PATH ?? '').split(delimiter).map((d) => join(d || '.', name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {}
  }
  return null;
}

/** The better-sqlite3 version npm will install: the lockfile's, else an installed one's. */
function wantedVersion() {
  for (const [file, pick] of [
    [join(root, 'package-lock.json'), (j) => j.packages?.['node_modules/better-sqlite3']?.version],
    [join(root, 'node_modules/better-sqlite3/package.json'), (j) => j.version],
  ]) {
    try {
      const v = pick(JSON.parse(readFileSync(file, 'utf8')));
      if (v) return v;
    } catch {}
  }
  return null;
}

/** `20.20.2` from a headers folder's include/node/node_version.h, or null when there are no headers. */
function headersVersion(prefix) {
  const inc = join(prefix, 'include/node');
  if (!existsSync(join(inc, 'node.h')) || !existsSync(join(inc, 'common.gypi'))) return null;
  try {
    const h = readFileSync(join(inc, 'node_version.h'), 'utf8');
    const n = (k) => new RegExp(`#define NODE_${k}_VERSION (\\d+)`).exec(h)?.[1];
    return `${n('MAJOR')}.${n('MINOR')}.${n('PATCH')}`;
  } catch {
    return 'unknown';
  }
}

/** npm's `nodedir` setting: npm hands it to `npm run` scripts; run by node alone, npm is asked. */
function configuredNodedir() {
  if (env.npm_config_nodedir !== undefined || env.npm_lifecycle_event) return env.npm_config_nodedir || null;
  const r = spawnSync('npm', ['config', 'get', 'nodedir'], { encoding: 'utf8', timeout: 20_000 });
  const v = r.status === 0 ? r.stdout.trim() : '';
  return v && v !== 'null' && v !== 'undefined' ? v : null;
}

/** The prebuilt binary's file in npm's cache, as prebuild-install names it (`<hash>-<asset>`), or null. */
function cachedPrebuilt(version) {
  const glibc = process.platform !== 'linux' || process.report?.getReport().header.glibcVersionRuntime;
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  const dir = join(env.npm_config_cache || join(homedir(), '.npm'), '_prebuilds');
  try {
    const hit = readdirSync(dir).find((f) => f.endsWith(`-${asset}`));
    return { asset, file: hit ? join(dir, hit) : null };
  } catch {
    return { asset, file: null };
  }
}

/** What this machine has of what the install needs. */
function gatherFacts() {
  const version = wantedVersion();
  const cxx = (env.CXX || 'g++').split(/\s+/)[0];
  const cc = (env.CC || 'cc').split(/\s+/)[0];
  const python = env.npm_config_python || env.PYTHON || 'python3';
  const nodedir = configuredNodedir();
  const gypCache = env.npm_config_devdir || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'node-gyp');
  // Where Node's headers may already be: beside this Node (official tarballs, nvm, NodeSource's
  // package), or the system's (Debian's libnode-dev).
  const prefixes = [...new Set([dirname(dirname(process.execPath)), '/usr', '/usr/local'])];
  return {
    version,
    built: existsSync(join(root, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')),
    prebuilt: version ? cachedPrebuilt(version) : null,
    tools: {
      [`C++ compiler (${cxx})`]: which(cxx),
      [`C compiler (${cc})`]: which(cc),
      make: which('make'),
      [`Python 3 (${python})`]: which(python),
    },
    nodedir,
    nodedirHeaders: nodedir ? headersVersion(nodedir) : null,
    gypCacheHeaders: headersVersion(join(gypCache, process.versions.node))
      ? join(gypCache, process.versions.node)
      : null,
    localHeaders: prefixes.map((p) => ({ prefix: p, version: headersVersion(p) })).filter((h) => h.version),
  };
}

/** The verdict and the lines that say it. */
function decide(f) {
  const node = process.versions.node;
  const lines = [];
  if (f.built) return { ok: true, lines: ['better-sqlite3 is built already (node_modules/better-sqlite3/build)'] };
  if (f.prebuilt?.file)
    return {
      ok: true,
      lines: [
        `better-sqlite3 ${f.version}: its prebuilt binary is in npm's cache (${f.prebuilt.file}); nothing needs downloading or building`,
      ],
    };
  lines.push(
    `better-sqlite3 ${f.version ?? '(version unknown)'}: no prebuilt binary in npm's cache${f.prebuilt ? ` (${f.prebuilt.asset})` : ''}: npm downloads one from GitHub, else builds it from source, which needs:`,
  );
  const missing = Object.entries(f.tools)
    .filter(([, path]) => !path)
    .map(([what]) => what);
  for (const [what, path] of Object.entries(f.tools))
    lines.push(`  ${path ? 'ok     ' : 'MISSING'}  ${what}${path ? `: ${path}` : ''}`);
  let headers = true;
  if (f.nodedir && f.nodedirHeaders) {
    const other = f.nodedirHeaders.split('.')[0] !== node.split('.')[0];
    lines.push(
      `  ${other ? 'WRONG  ' : 'ok     '}  Node's headers: npm's nodedir ${f.nodedir} (Node ${f.nodedirHeaders}${other ? `; this is Node ${node}` : ''})`,
    );
    headers = !other;
  } else if (f.nodedir) {
    lines.push(`  MISSING  Node's headers: npm's nodedir is ${f.nodedir}, which has no include/node`);
    headers = false;
  } else if (f.gypCacheHeaders) {
    lines.push(`  ok       Node's headers: node-gyp's cache ${f.gypCacheHeaders}`);
  } else {
    lines.push(
      `  MISSING  Node's headers: none local; node-gyp downloads them from nodejs.org (npm's nodedir is not set)`,
    );
    headers = false;
  }
  const fixes = [];
  if (missing.length > 0)
    fixes.push('a C/C++ toolchain, make and Python 3: on Debian or Ubuntu, apt-get install build-essential python3');
  if (!headers) {
    const match = f.localHeaders.find((h) => h.version === node);
    fixes.push(
      match
        ? `Node ${node}'s headers are in ${match.prefix}/include/node: npm_config_nodedir=${match.prefix} npm install (or npm config set nodedir ${match.prefix})`
        : `Node ${node}'s headers: with Debian's own nodejs package, apt-get install libnode-dev, then npm_config_nodedir=/usr npm install; NodeSource's package and Node's release tarballs have them in <prefix>/include/node (npm_config_nodedir=<prefix>)`,
    );
  }
  if (fixes.length === 0) {
    lines.push('A build from source can work here without downloading anything but npm packages.');
    return { ok: true, lines };
  }
  // Downloading the headers is a way out only when they are all that is missing and no nodedir is set.
  const orHeaders = missing.length === 0 && !f.nodedir ? " or Node's headers from nodejs.org" : '';
  lines.push(
    `Unless npm can download the prebuilt binary from GitHub${orHeaders}, npm install fails here. To build from source${orHeaders ? ' without them' : ''}:`,
    ...fixes.map((x) => `  ${x}`),
  );
  return { ok: false, lines };
}

const verdict = decide(gatherFacts());
(verdict.ok ? console.log : console.error)(verdict.lines.join('\n'));
process.exit(verdict.ok ? 0 : 1);
