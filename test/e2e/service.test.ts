// `olp service` through the built bin: with a fake systemctl on PATH (which commands it runs), the unit
// it writes checked by systemd's own `systemd-analyze verify`, and, where a user service manager runs
// (not in CI, nor in most containers), the real thing: installed, started, killed, started again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FAKE_CLAUDE, OLP_BIN, ROOT } from '../support/paths.js';
import { waitFor } from '../support/wait.js';

const base = mkdtempSync(join(tmpdir(), 'olp-service-e2e-'));
after(() => rmSync(base, { recursive: true, force: true }));
const FAKES = join(ROOT, 'test/fixtures/service-bin');
const CALLS = join(base, 'calls.log');
const HOME = join(base, 'home');

function olp(args: string[], env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, [OLP_BIN, 'service', ...args], {
    encoding: 'utf8',
    cwd: base,
    env,
    timeout: 30_000,
  });
}

const fakeEnv = {
  PATH: `${FAKES}:${process.env.PATH ?? ''}`,
  HOME,
  XDG_CONFIG_HOME: join(HOME, 'config'),
  OLP_FAKE_SERVICE_LOG: CALLS,
};

/** systemd's own check of a unit; null (and the test skipped) where systemd-analyze is not installed. */
function verify(unit: string, mode: 'user' | 'system'): { status: number | null; stderr: string } | null {
  const runtime = join(base, 'runtime');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const r = spawnSync('systemd-analyze', [...(mode === 'user' ? ['--user'] : []), 'verify', unit], {
    encoding: 'utf8',
    // --user needs a runtime dir to set up its manager, not a running one.
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return null;
  return { status: r.status, stderr: r.stderr };
}
const NO_ANALYZE = 'systemd-analyze is not installed (Debian: apt-get install systemd)';

describe('olp service, systemctl faked', () => {
  const stateDir = join(base, 'state');
  const unitFile = join(HOME, 'config/systemd/user/olp.service');

  it('install writes the unit, runs systemctl; status, logs and uninstall run theirs', () => {
    const install = olp(['install', '--port', '18787', '--state-dir', stateDir, '--claude-bin', FAKE_CLAUDE], fakeEnv);
    assert.equal(install.status, 0, install.stderr);
    assert.match(install.stdout, /enabled and started olp\.service/);
    assert.match(install.stdout, /loginctl enable-linger/);
    const unit = readFileSync(unitFile, 'utf8');
    assert.ok(unit.includes(`ExecStart=${process.execPath} ${OLP_BIN} serve --port 18787 --claude-bin ${FAKE_CLAUDE}`));
    assert.ok(unit.includes(`Environment=OLP_STATE_DIR=${stateDir}`));
    assert.equal(statSync(stateDir).mode & 0o777, 0o700);
    assert.equal(olp(['status'], fakeEnv).status, 0);
    assert.equal(olp(['logs', '-n', '5'], fakeEnv).status, 0);
    writeFileSync(join(base, 'unit-copy.service'), unit);
    const gone = olp(['uninstall'], fakeEnv);
    assert.equal(gone.status, 0, gone.stderr);
    assert.ok(!existsSync(unitFile));
    assert.deepEqual(readFileSync(CALLS, 'utf8').trim().split('\n'), [
      'systemctl --user daemon-reload',
      'systemctl --user enable olp.service',
      'systemctl --user restart olp.service',
      'systemctl --user status --no-pager --full olp.service',
      'journalctl --user -u olp.service --no-pager -n 5',
      'systemctl --user disable --now olp.service',
      'systemctl --user daemon-reload',
    ]);
  });

  it('the unit it wrote passes systemd-analyze verify --user', (t) => {
    const r = verify(join(base, 'unit-copy.service'), 'user');
    if (!r) return t.skip(NO_ANALYZE);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
  });

  it('--print --system gives a system-wide unit that passes systemd-analyze verify', (t) => {
    const p = olp(['install', '--print', '--system', '--state-dir', stateDir], fakeEnv);
    assert.equal(p.status, 0, p.stderr);
    assert.match(p.stdout, /^WantedBy=multi-user\.target$/m);
    const file = join(base, 'olp-system.service');
    writeFileSync(file, p.stdout);
    const r = verify(file, 'system');
    if (!r) return t.skip(NO_ANALYZE);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
  });
});

/** Why the real user service manager cannot be used here, or null when it can. */
function noUserManager(): string | null {
  const r = spawnSync('systemctl', ['--user', 'is-system-running'], { encoding: 'utf8' });
  if (r.error) return 'systemctl is not installed';
  const state = r.stdout.trim();
  return state === 'running' || state === 'degraded'
    ? null
    : `no user service manager runs here (systemctl --user is-system-running: ${state || r.stderr.trim()})`;
}

describe('olp service with the real systemd user manager', () => {
  const skip = noUserManager();
  const name = `olp-test-${process.pid}`;
  const show = (prop: string) =>
    spawnSync('systemctl', ['--user', 'show', '-p', prop, '--value', `${name}.service`], {
      encoding: 'utf8',
    }).stdout.trim();

  it('installs and starts olp; killed with SIGKILL, it is started again', { skip: skip ?? false }, async (t) => {
    const env = { ...process.env };
    t.after(() => olp(['uninstall', '--name', name], env));
    const r = olp(
      ['install', '--name', name, '--port', '0', '--state-dir', join(base, 'real-state'), '--claude-bin', FAKE_CLAUDE],
      env,
    );
    assert.equal(r.status, 0, r.stderr);
    let first = 0;
    await waitFor(
      () => show('ActiveState') === 'active' && (first = Number(show('MainPID'))) > 0,
      30_000,
      'olp to start',
    );
    process.kill(first, 'SIGKILL');
    await waitFor(
      () => show('ActiveState') === 'active' && ![0, first].includes(Number(show('MainPID'))),
      30_000,
      'systemd to start olp again',
    );
    assert.ok(Number(show('NRestarts')) >= 1);
  });
});
