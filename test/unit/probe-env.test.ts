// `olp doctor`'s status commands run the way a real run does: the backend's allow-listed
// environment in a throwaway private home with only the login files linked, never the operator's.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseConfig } from '../../src/config/index.js';
import { FAKE_CLAUDE, FAKE_CODEX } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-probe-env-'));
after(() => rmSync(base, { recursive: true, force: true }));

interface Dump {
  args: string[];
  env: string[];
  home: string;
  credentialsVisible?: boolean;
  codexHome?: string;
  authVisible?: boolean;
}

describe('olp doctor status probes', () => {
  it('get no host secret, a throwaway home with the login linked, and leave nothing behind (no state dir needed)', async () => {
    const operatorHome = join(base, 'home');
    const claudeDump = join(base, 'claude-dump');
    const codexDump = join(base, 'codex-dump');
    for (const d of [join(operatorHome, '.claude'), join(operatorHome, '.codex'), claudeDump, codexDump])
      mkdirSync(d, { recursive: true });
    writeFileSync(join(operatorHome, '.claude', '.credentials.json'), '{}');
    writeFileSync(join(operatorHome, '.codex', 'auth.json'), '{}');
    const stateDir = join(base, 'state-not-created');
    const config = parseConfig({
      readFile: false,
      env: {},
      overrides: {
        stateDir,
        port: 0,
        claudeBin: FAKE_CLAUDE,
        codexBin: FAKE_CODEX,
        claudeEnv: { FAKE_CLAUDE_PROBE_DUMP: claudeDump },
        codexEnv: { FAKE_CODEX_PROBE_DUMP: codexDump },
      },
    });
    const hostEnv = {
      PATH: process.env.PATH ?? '',
      HOME: operatorHome,
      LANG: 'C.UTF-8',
      GITHUB_TOKEN: 'ghp_x',
      ANTHROPIC_API_KEY: 'sk-ant-x',
      CODEX_API_KEY: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      CLAUDE_CODE_ENTRYPOINT: 'cli',
      CODEX_HOME: join(operatorHome, '.codex'),
    };
    let text = '';
    const code = await runDoctor(config, hostEnv, (s) => (text += s));
    assert.equal(code, 0, text);
    assert.match(text, /claude\s+\S+\s+2\.1\.197 \(Claude Code\)\s+logged in/);
    assert.match(text, /codex\s+\S+\s+codex-cli 0\.171\.0\s+logged in/);
    assert.equal(existsSync(stateDir), false, 'doctor does not create the state dir');

    const read = (dir: string) => readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Dump);
    const claude = read(claudeDump);
    const codex = read(codexDump);
    assert.equal(claude.length, 2);
    assert.equal(codex.length, 2);
    for (const d of [...claude, ...codex]) {
      for (const name of [
        'GITHUB_TOKEN',
        'ANTHROPIC_API_KEY',
        'CODEX_API_KEY',
        'AWS_SECRET_ACCESS_KEY',
        'CLAUDE_CODE_ENTRYPOINT',
      ])
        assert.ok(!d.env.includes(name), `${d.args.join(' ')} got ${name}`);
      assert.ok(d.env.includes('PATH') && d.env.includes('LANG'), 'the allow-listed host variables pass');
      assert.notEqual(d.home, operatorHome);
      assert.ok(d.home.startsWith(tmpdir()), d.home);
      assert.equal(existsSync(d.home), false, 'the throwaway home is removed');
    }
    for (const d of claude) assert.equal(d.credentialsVisible, true);
    for (const d of codex) {
      assert.equal(d.codexHome, join(d.home, '.codex'), "the operator's CODEX_HOME is replaced by the run's own");
      assert.equal(d.authVisible, true);
    }
  });
});
