// What `olp logins` repeats of a CLI's words: one line, with anything like a credential masked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toSaid } from '../../src/logins/index.js';

describe('toSaid', () => {
  it('masks the secret it was given and anything shaped like a key or token', () => {
    for (const [text, secrets, said] of [
      ['Error: bad key my-own-secret-value\n  retry', ['my-own-secret-value'], 'Error: bad key *** retry'],
      ['API key configured - sk-proj-***lmnop', [], 'API key configured - ***'],
      ['token at-abcdef123456 refused', [], 'token *** refused'],
      ['jwt eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.sig invalid', [], 'jwt *** invalid'],
      ['Not logged in', [], 'Not logged in'],
    ] as const)
      assert.equal(toSaid(text, secrets), said);
  });

  it('cuts a long message to one short line', () => {
    const said = toSaid('word '.repeat(200));
    assert.equal(said.length, 301);
    assert.ok(said.endsWith('…'));
  });
});
