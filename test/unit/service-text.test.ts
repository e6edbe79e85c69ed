// The text of olp's service definitions: the systemd unit's lines and quoting, the launchd plist read
// back by a strict plist reader, the serve flags and environment that go into them (never a secret).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureEnv, toServeArgs } from '../../src/cli/service-spec.js';
import { toLaunchdPlist, toSystemdUnit, toSystemdWord, type ServiceSpec } from '../../src/cli/service-text.js';
import { parsePlist } from '../support/plist.js';

const SPEC: ServiceSpec = {
  name: 'olp',
  node: '/usr/bin/node',
  entry: '/opt/olp/lib/node_modules/olp/dist/src/cli/main.js',
  args: ['serve', '--port', '8787'],
  env: { PATH: '/usr/local/bin:/usr/bin:/bin', OLP_STATE_DIR: '/home/ann/.olp' },
  docs: 'file:///opt/olp/lib/node_modules/olp/docs/service.md',
};

/** `[Section]` → its `Key=value` lines. */
function sections(unit: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let at = '';
  for (const line of unit.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const head = /^\[(\w+)\]$/.exec(line);
    if (head) out[(at = head[1]!)] = [];
    else out[at]!.push(line);
  }
  return out;
}

describe('the systemd unit', () => {
  it('runs this node and this olp by absolute path, with the flags, restarted on failure', () => {
    const s = sections(toSystemdUnit(SPEC));
    assert.ok(s.Unit!.some((l) => /^Description=olp/.test(l)));
    assert.ok(s.Unit!.includes(`Documentation=${SPEC.docs}`));
    assert.ok(s.Service!.includes(`ExecStart=/usr/bin/node ${SPEC.entry} serve --port 8787`));
    for (const l of ['Restart=on-failure', 'RestartSec=5', 'KillMode=mixed', 'UMask=0077', 'Type=exec'])
      assert.ok(s.Service!.includes(l), l);
    assert.ok(s.Service!.includes('Environment=PATH=/usr/local/bin:/usr/bin:/bin'));
    assert.ok(s.Service!.includes('Environment=OLP_STATE_DIR=/home/ann/.olp'));
    assert.ok(!s.Service!.some((l) => l.startsWith('User=')), 'a user unit names no user');
    assert.deepEqual(s.Install, ['WantedBy=default.target']);
  });

  it('a system-wide unit runs as the user, after the network, at boot', () => {
    const s = sections(toSystemdUnit({ ...SPEC, systemUser: 'ann' }));
    assert.ok(s.Service!.includes('User=ann'));
    assert.ok(s.Unit!.includes('After=network-online.target'));
    assert.deepEqual(s.Install, ['WantedBy=multi-user.target']);
  });

  it('quotes words with spaces and keeps % and $ as they are', () => {
    assert.equal(toSystemdWord('/usr/bin/node'), '/usr/bin/node');
    assert.equal(toSystemdWord('/home/a b/olp'), '"/home/a b/olp"');
    assert.equal(toSystemdWord('50%'), '50%%');
    assert.equal(toSystemdWord('$HOME'), '$$HOME');
    assert.equal(toSystemdWord('say "hi"'), '"say \\"hi\\""');
    const unit = toSystemdUnit({ ...SPEC, entry: '/home/a b/olp/main.js', env: { PATH: '/a b:/usr/bin' } });
    assert.match(unit, /^ExecStart=\/usr\/bin\/node "\/home\/a b\/olp\/main\.js" serve/m);
    assert.match(unit, /^Environment="PATH=\/a b:\/usr\/bin"$/m);
  });
});

describe('the launchd plist', () => {
  const plist = () => toLaunchdPlist({ ...SPEC, logFile: '/Users/ann/Library/Logs/olp/olp.log', home: '/Users/ann' });

  it('reads back as a property list with the agent launchd needs', () => {
    const p = parsePlist(plist()) as Record<string, unknown>;
    assert.equal(p.Label, 'dev.olp');
    assert.deepEqual(p.ProgramArguments, ['/usr/bin/node', SPEC.entry, 'serve', '--port', '8787']);
    assert.equal(p.RunAtLoad, true);
    assert.deepEqual(p.KeepAlive, { SuccessfulExit: false });
    assert.deepEqual(p.EnvironmentVariables, SPEC.env);
    assert.equal(p.StandardOutPath, '/Users/ann/Library/Logs/olp/olp.log');
    assert.equal(p.StandardErrorPath, p.StandardOutPath);
    assert.equal(p.WorkingDirectory, '/Users/ann');
    assert.equal(p.Umask, 0o077);
    assert.equal(p.ThrottleInterval, 5);
  });

  it('escapes what XML would read otherwise', () => {
    const entry = '/Users/a&b/<olp>/"main".js';
    const p = parsePlist(toLaunchdPlist({ ...SPEC, name: 'olp-b', entry })) as Record<string, unknown>;
    assert.equal((p.ProgramArguments as string[])[1], entry);
    assert.equal(p.Label, 'dev.olp.olp-b');
  });

  it('the reader refuses what is not a well-formed plist', () => {
    const good = plist();
    for (const [why, bad] of [
      ['an unclosed tag', good.replace('</array>', '')],
      ['a bare &', good.replace('dev.olp', 'dev&olp')],
      ['a key twice', good.replace('<key>RunAtLoad</key>', '<key>Label</key>')],
      ['a key without its value', good.replace('<true/>', '')],
      ['a foreign element', good.replace('<true/>', '<yes/>')],
      ['no declaration', good.slice(good.indexOf('\n') + 1)],
      ['text in a dict', good.replace('<key>Label</key>', 'Label<key>Label</key>')],
    ])
      assert.throws(() => parsePlist(bad!), Error, why);
  });
});

describe('what goes into them', () => {
  it("serve's flags as given, repeated ones repeated; the state dir goes into the environment instead", () => {
    assert.deepEqual(toServeArgs({ port: '9000', peer: ['a=http://x:1', 'b=http://y:2'], 'state-dir': '/s' }), [
      'serve',
      '--port',
      '9000',
      '--peer',
      'a=http://x:1',
      '--peer',
      'b=http://y:2',
    ]);
  });

  it('refuses a secret flag, saying where it goes instead', () => {
    assert.throws(() => toServeArgs({ 'alert-webhook': 'https://hooks.slack.com/services/T/B/x' }), /config\.json/);
  });

  it('captures PATH and the CLIs’ variables, the OLP_ settings, never a secret', () => {
    const { env, left } = captureEnv(
      {
        PATH: '/w/olp/node_modules/.bin:/w/node_modules/.bin:/usr/lib/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin:/bin',
        LANG: 'C.UTF-8',
        CODEX_HOME: '/c',
        HTTPS_PROXY: 'http://user:pw@proxy:3128',
        NO_PROXY: 'localhost',
        OLP_PORT: '9000',
        OLP_ALERT_WEBHOOK: 'https://hooks.example/x',
        OLP_STATE_DIR: 'relative',
        HOME: '/home/ann',
        SECRET_TOKEN: 'x',
        USER: 'ann',
      },
      '/home/ann/.olp',
    );
    assert.deepEqual(env, {
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      NO_PROXY: 'localhost',
      CODEX_HOME: '/c',
      OLP_PORT: '9000',
      OLP_STATE_DIR: '/home/ann/.olp',
    });
    assert.equal(left.length, 2);
    assert.match(left.join(' '), /HTTPS_PROXY.*OLP_ALERT_WEBHOOK/);
  });
});
