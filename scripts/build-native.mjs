#!/usr/bin/env node
// Builds olp's native process starter (src/native) with node-gyp, as npm's install step.
// Without a C compiler (or off Linux) the build is skipped with a notice and olp starts CLI
// processes with Node's child_process.spawn instead: slower per request, the same behaviour.
// OLP_NATIVE_REQUIRED=1 makes a failed build an error (CI, where the compiler is known to be there).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const required = process.env.OLP_NATIVE_REQUIRED === '1';

function skip(why) {
  if (required) {
    console.error(`olp: the native process starter could not be built: ${why}`);
    process.exit(1);
  }
  console.warn(
    `olp: the native process starter was not built (${why}); CLI processes will be started with Node's child_process.spawn.`,
  );
  process.exit(0);
}

/** npm's own node-gyp: the one npm names to its scripts, else the one beside this Node's npm. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'),
  ];
  try {
    candidates.push(createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // not installed as a package
  }
  return candidates.find((c) => c && existsSync(c));
}

if (process.platform !== 'linux') skip(`it is for Linux; this is ${process.platform}`);
const gyp = nodeGyp();
if (!gyp) skip('node-gyp was not found');
const r = spawnSync(process.execPath, [gyp, 'rebuild', '--directory', join(root, 'src/native')], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'pipe'],
});
if (r.status !== 0) {
  const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-6).join('\n');
  skip(`node-gyp failed:\n${tail}`);
}
