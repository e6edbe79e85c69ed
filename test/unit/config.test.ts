import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type ConfigError, parseConfig } from '../../src/config/index.js';

const dir = () => mkdtempSync(join(tmpdir(), 'olp-config-'));

describe('config', () => {
  it('has safe defaults: loopback, 8787, ~/.olp', () => {
    const c = parseConfig({ env: {}, readFile: false });
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8787);
    assert.match(c.stateDir, /\.olp$/);
    assert.equal(c.bodyLimit, 10 * 1024 * 1024);
    assert.ok(Object.isFrozen(c));
  });

  it('flags beat env, env beats the config file', () => {
    const stateDir = dir();
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ port: 1111, host: '127.0.0.2', timeout: 5 }));
    const c = parseConfig({
      flags: { port: '3333' },
      env: { OLP_STATE_DIR: stateDir, OLP_PORT: '2222', OLP_HOST: '127.0.0.3' },
    });
    assert.deepEqual([c.port, c.host, c.timeout], [3333, '127.0.0.3', 5]);
  });

  it('names the source of every bad value', () => {
    const stateDir = dir();
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ timeout: 'soon', colour: 'blue' }));
    assert.throws(
      () => parseConfig({ flags: { stateDir, port: 'eighty' }, env: { OLP_LOG_LEVEL: 'loud', OLP_CLAUDE_ENV: '{' } }),
      (err: ConfigError) => {
        const text = err.problems.join('\n');
        assert.match(text, /flag --port: expected an integer, got 'eighty'/);
        assert.match(text, /env OLP_LOG_LEVEL: /);
        assert.match(text, /env OLP_CLAUDE_ENV: expected a JSON object/);
        assert.match(text, /config\.json: timeout: /);
        assert.match(text, /config\.json: unknown setting 'colour'/);
        return true;
      },
    );
  });

  it('rejects an out-of-range port and a broken config file', () => {
    assert.throws(() => parseConfig({ flags: { port: '70000' }, env: {}, readFile: false }), /flag --port/);
    const stateDir = dir();
    writeFileSync(join(stateDir, 'config.json'), '{ nope');
    assert.throws(() => parseConfig({ flags: { stateDir }, env: {} }), /not valid JSON/);
  });

  it('reads lists and records', () => {
    const c = parseConfig({
      flags: { claudePassEnv: ['ANTHROPIC_API_KEY', 'A,B'] },
      env: { OLP_CLAUDE_ENV: '{"X":"1"}' },
      readFile: false,
    });
    assert.deepEqual(c.claudePassEnv, ['ANTHROPIC_API_KEY', 'A', 'B']);
    assert.deepEqual(c.claudeEnv, { X: '1' });
  });
});
