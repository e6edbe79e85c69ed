// `olp service` with its commands run by an injected runner: which files it writes and removes, which
// systemctl, journalctl, launchctl and tail commands it runs in what order, and what it says when one fails.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from '../../src/cli/keys.js';
import type { Sink } from '../../src/cli/output.js';
import { runService, type ServiceHost, type ServiceRunner } from '../../src/cli/service.js';
import { parsePlist } from '../support/plist.js';

const base = mkdtempSync(join(tmpdir(), 'olp-service-'));
after(() => rmSync(base, { recursive: true, force: true }));

function sink(): Sink & { text: string } {
  return {
    text: '',
    write(s: string) {
      this.text += s;
      return true;
    },
    drain: async () => true,
    closed: false,
  };
}

/** A runner that notes each command and answers with `codes[command]` (0 when not given). */
function fakeRunner(codes: Record<string, number | null> = {}): ServiceRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async run(command, args) {
      calls.push([command, ...args].join(' '));
      const line = [command, ...args].join(' ');
      return line in codes ? codes[line]! : command in codes ? codes[command]! : 0;
    },
  };
}

let n = 0;
/** A fresh home (and XDG config dir, state dir) for one test on `platform`. */
function setup(platform: NodeJS.Platform) {
  const home = join(base, `home-${++n}`);
  const env = { PATH: '/usr/bin:/bin', XDG_CONFIG_HOME: join(home, 'xdg'), HOME: home };
  const host: ServiceHost = {
    platform,
    env,
    home,
    uid: 1234,
    user: 'nobody-here',
    node: '/usr/bin/node',
    root: '/opt/olp',
  };
  const io = { env, stdout: sink(), stderr: sink() };
  const stateDir = join(home, 'state');
  return { home, host, io, stateDir, run: (argv: string[], r: ServiceRunner) => runService(argv, io, host, r) };
}

describe('olp service on Linux (systemd)', () => {
  it('install writes the user unit, reloads, enables and (re)starts it, and says how to keep it running', async () => {
    const t = setup('linux');
    const r = fakeRunner();
    assert.equal(await t.run(['install', '--port', '9000', '--state-dir', t.stateDir], r), 0, t.io.stderr.text);
    const file = join(t.home, 'xdg/systemd/user/olp.service');
    const unit = readFileSync(file, 'utf8');
    assert.match(unit, /^ExecStart=\/usr\/bin\/node \/opt\/olp\/dist\/src\/cli\/main\.js serve --port 9000$/m);
    assert.match(unit, new RegExp(`^Environment=OLP_STATE_DIR=${t.stateDir}$`, 'm'));
    assert.deepEqual(r.calls, [
      'systemctl --user daemon-reload',
      'systemctl --user enable olp.service',
      'systemctl --user restart olp.service',
    ]);
    assert.equal(statSync(t.stateDir).mode & 0o777, 0o700, 'the state dir is made ready, private');
    assert.match(t.io.stdout.text, /loginctl enable-linger nobody-here/);
  });

  it('status, logs, restart and uninstall run systemctl and journalctl for the unit', async () => {
    const t = setup('linux');
    const r = fakeRunner();
    await t.run(['install', '--name', 'olp-b', '--state-dir', t.stateDir], r);
    r.calls.length = 0;
    assert.equal(await t.run(['status', '--name', 'olp-b'], r), 0);
    assert.equal(await t.run(['logs', '--name', 'olp-b', '-f', '-n', '20'], r), 0);
    assert.equal(await t.run(['restart', '--name', 'olp-b'], r), 0);
    assert.equal(await t.run(['uninstall', '--name', 'olp-b'], r), 0);
    assert.deepEqual(r.calls, [
      'systemctl --user status --no-pager --full olp-b.service',
      'journalctl --user -u olp-b.service --no-pager -n 20 -f',
      'systemctl --user restart olp-b.service',
      'systemctl --user disable --now olp-b.service',
      'systemctl --user daemon-reload',
    ]);
    assert.ok(!existsSync(join(t.home, 'xdg/systemd/user/olp-b.service')));
    assert.ok(existsSync(t.stateDir), 'the state dir and its keys stay');
  });

  it('passes on the exit status of status (3: not running) without adding to what systemctl said', async () => {
    const t = setup('linux');
    await t.run(['install', '--state-dir', t.stateDir], fakeRunner());
    t.io.stderr.text = '';
    assert.equal(await t.run(['status'], fakeRunner({ systemctl: 3 })), 3);
    assert.equal(t.io.stderr.text, '');
  });

  it('with no user service manager: exit 1, the unit written, and what to do instead', async () => {
    const t = setup('linux');
    const r = fakeRunner({ 'systemctl --user daemon-reload': 1 });
    assert.equal(await t.run(['install', '--state-dir', t.stateDir], r), 1);
    assert.deepEqual(r.calls, ['systemctl --user daemon-reload']);
    assert.match(t.io.stderr.text, /daemon-reload` failed \(exit 1\).*--print --system/);
  });

  it('without systemctl: says so', async () => {
    const t = setup('linux');
    assert.equal(await t.run(['install', '--state-dir', t.stateDir], fakeRunner({ systemctl: null })), 1);
    assert.match(t.io.stderr.text, /systemctl was not found/);
  });

  it('status of a service never installed: exit 1; uninstall of one: nothing to do, exit 0', async () => {
    const t = setup('linux');
    const r = fakeRunner();
    assert.equal(await t.run(['status'], r), 1);
    assert.equal(await t.run(['uninstall'], r), 0);
    assert.deepEqual(r.calls, []);
    assert.match(t.io.stderr.text, /no service olp is installed/);
  });

  it('--print writes the unit to stdout and creates nothing', async () => {
    const t = setup('linux');
    const r = fakeRunner();
    assert.equal(await t.run(['install', '--print', '--system', '--state-dir', t.stateDir], r), 0);
    assert.match(t.io.stdout.text, /^User=nobody-here$/m);
    assert.deepEqual(r.calls, []);
    assert.ok(!existsSync(t.stateDir) && !existsSync(join(t.home, 'xdg')));
  });

  it('refuses options that do not go with the command', async () => {
    const t = setup('linux');
    for (const argv of [
      ['status', '--port', '1'],
      ['install', '--platform', 'darwin'],
      ['install', '--follow'],
      ['install', '--name', 'Bad Name'],
      ['install', '--print', '--platform', 'windows'],
      ['start'],
      ['install', '--alert-webhook', 'https://hooks.example/x'],
    ])
      await assert.rejects(t.run(argv, fakeRunner()), UsageError, argv.join(' '));
  });
});

describe('olp service on macOS (launchd)', () => {
  it('install writes the agent and its log dir, then boots it out (if loaded), enables and bootstraps it', async () => {
    const t = setup('darwin');
    const r = fakeRunner({ 'launchctl bootout gui/1234/dev.olp': 5 });
    assert.equal(await t.run(['install', '--state-dir', t.stateDir], r), 0, t.io.stderr.text);
    const file = join(t.home, 'Library/LaunchAgents/dev.olp.plist');
    const p = parsePlist(readFileSync(file, 'utf8')) as Record<string, unknown>;
    assert.equal(p.StandardOutPath, join(t.home, 'Library/Logs/olp/olp.log'));
    assert.ok(existsSync(join(t.home, 'Library/Logs/olp')));
    assert.deepEqual(r.calls, [
      'launchctl bootout gui/1234/dev.olp',
      'launchctl enable gui/1234/dev.olp',
      `launchctl bootstrap gui/1234 ${file}`,
    ]);
    r.calls.length = 0;
    await t.run(['logs'], r);
    await t.run(['restart'], r);
    await t.run(['status'], r);
    await t.run(['uninstall'], r);
    assert.deepEqual(r.calls, [
      `tail -n 100 ${join(t.home, 'Library/Logs/olp/olp.log')}`,
      'launchctl kickstart -k gui/1234/dev.olp',
      'launchctl print gui/1234/dev.olp',
      'launchctl bootout gui/1234/dev.olp',
    ]);
    assert.ok(!existsSync(file));
  });
});
