import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitizeStderr } from '../../src/log/index.js';

describe('CLI stderr sanitising', () => {
  const prompt =
    '{"type":"user","message":{"role":"user","content":"my bank PIN is 4921 and my secret plan is to retire early"}}';

  it('redacts tokens', () => {
    const out = sanitizeStderr(
      'fatal: could not refresh token=olpk_abcdefghijklmnop0123456789 (Bearer sk-ant-api03-abcdefghijklmnopqrstuv)\n',
    );
    assert.doesNotMatch(out, /olpk_abcdef|sk-ant-api03/);
    assert.match(out, /\[REDACTED\]/);
  });

  it("drops claude's echo of an input line it could not parse", () => {
    const out = sanitizeStderr(`Error parsing streaming input line: ${prompt}\nsomething else\n`, `${prompt}\n`);
    assert.doesNotMatch(out, /PIN|retire/);
    assert.match(out, /Error parsing streaming input line: \[input omitted\]/);
    assert.match(out, /something else/);
  });

  it('drops any line that quotes a stretch of the input', () => {
    const out = sanitizeStderr(`warn: unexpected token near "my secret plan is to retire early"}}\n`, prompt);
    assert.doesNotMatch(out, /retire/);
    assert.equal(
      sanitizeStderr('an ordinary error line that is long enough to be checked\n', prompt),
      'an ordinary error line that is long enough to be checked\n',
    );
  });
});
