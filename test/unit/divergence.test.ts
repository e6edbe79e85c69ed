import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { divergence, type Seen } from '../../src/sessions/divergence.js';
import { toChain } from '../../src/sessions/index.js';
import type { Turn } from '../../src/transcript/index.js';

const user = (text: string): Turn => ({ role: 'user', text });
const assistant = (text: string): Turn => ({ role: 'assistant', text });
const tool = (text: string): Turn => ({ role: 'tool', text });
const seenOf = (turns: Turn[]): Seen => ({ chain: toChain(turns), roles: turns.map((t) => t.role) });
const free = (_slot: number) => false;

describe('where a new conversation parts from the closest one', () => {
  const had = [user('write a.txt'), assistant('<tool_call id="1">'), tool('done'), assistant('written')];
  const seen = new Map([
    [0, seenOf(had)],
    [1, seenOf([user('something else'), assistant('ok')])],
  ]);
  const at = (turns: Turn[], busy = free) => divergence(seen, toChain(turns), turns, busy);

  it('names the first turn that differs, and the slot whose conversation it shares the most with', () => {
    assert.deepEqual(at([had[0]!, assistant('<tool_call id="2">'), tool('done'), user('go on')]), {
      slot: 0,
      at: 1,
      why: 'its assistant turn differs',
    });
    assert.deepEqual(at([had[0]!, user('and?')]), {
      slot: 0,
      at: 1,
      why: 'it has a user turn where the conversation had an assistant one',
    });
  });

  it('all of the conversation, then turns that do not continue it; or cut short; or its slot in use', () => {
    assert.deepEqual(at([...had, assistant('more')]), {
      slot: 0,
      at: 4,
      why: 'the turns it adds begin with an assistant turn',
    });
    assert.deepEqual(at(had.slice(0, 2)), { slot: 0, at: 2, why: "it ends at turn 2 of the conversation's 4" });
    assert.deepEqual(
      at([...had, user('next')], (slot) => slot === 0),
      {
        slot: 0,
        at: 4,
        why: "its conversation's slot was in use",
      },
    );
  });

  it('nothing in common with any: a new conversation indeed', () => {
    assert.equal(at([user('hello')]), undefined);
  });
});
