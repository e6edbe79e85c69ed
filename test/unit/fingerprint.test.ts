import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { systemHash, toChain } from '../../src/sessions/index.js';
import { toAssistantTurn, toTranscript } from '../../src/transcript/index.js';

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

describe('a call sent back re-serialised', () => {
  const reply = (args: string, id = 'toolu_1') =>
    toTranscript([
      { role: 'user', parts: [{ type: 'text', text: 'edit a.txt' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id, name: 'Edit', arguments: args }] },
    ]).turns;
  const asModelWrote = '{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}';
  // What Claude Code 2.1.197 and 2.1.332 send back (test/fixtures/reference/clients/README.md).
  const asClientSent = '{"replace_all":false,"file_path":"a.txt","old_string":"beta","new_string":"gamma"}';

  it("is the same turn to match, by its id: the chain does not depend on the call's arguments", () => {
    const cli = reply(asModelWrote);
    const client = reply(asClientSent);
    assert.notEqual(cli[1]!.text, client[1]!.text, 'the rendering keeps the arguments as sent');
    assert.deepEqual(toChain(cli), toChain(client));
    // The slot's own record of the reply (toAssistantTurn over the CLI's calls) matches too.
    const turn = toAssistantTurn([], [{ id: 'toolu_1', name: 'Edit', args: asModelWrote }])!;
    assert.equal(turn.key, client[1]!.key);
  });

  it('a call without an id, or another id, is matched by what it says', () => {
    assert.notDeepEqual(toChain(reply(asModelWrote, '')), toChain(reply(asClientSent, '')));
    assert.notDeepEqual(toChain(reply(asModelWrote)), toChain(reply(asModelWrote, 'toolu_2')));
  });
});
