import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { systemHash, toChain } from '../../src/sessions/index.js';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

// Slots store these hashes: a change of how they are computed must not change their values, or
// every stored conversation would stop matching and rotate.
describe('session fingerprints', () => {
  it('a system hash is sha256 of the tagged prompt, UTF-8, and none is the same as empty', () => {
    assert.equal(systemHash('Réponds en français ✓'), sha('system\u0000Réponds en français ✓'));
    assert.equal(systemHash(null), systemHash(''));
    assert.equal(systemHash(null), sha('system\u0000'));
  });

  it('a chain starts at a fixed root and hashes each turn onto the one before', () => {
    const chain = toChain([
      { role: 'user', text: 'héllo' },
      { role: 'assistant', text: 'hi', name: 'bot' },
    ] as Parameters<typeof toChain>[0]);
    assert.equal(chain.length, 3);
    assert.equal(chain[0], sha('olp-session-v1'));
    assert.equal(chain[1], sha(`${chain[0]}\u0000user\u0000\u0000héllo\u0000`));
    assert.equal(chain[2], sha(`${chain[1]}\u0000assistant\u0000bot\u0000hi\u0000`));
    assert.deepEqual(toChain([]), [chain[0]]);
  });
});
