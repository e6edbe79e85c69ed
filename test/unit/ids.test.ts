import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newRequestId } from '../../src/http/app.js';
import { randomText } from '../../src/ids/index.js';
import { newCompletionId } from '../../src/wire/index.js';

describe('ids', () => {
  it('request ids are req_ and 32 hex digits, and do not repeat across refills of the pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) assert.match(id, /^req_[0-9a-f]{32}$/);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('ids of sizes that do not divide the pool stay whole and distinct across its refills', () => {
    // 18 bytes do not divide 4096: the pool must refill before an id would run past its end.
    const ids = Array.from({ length: 1000 }, () => newCompletionId());
    for (const id of ids) assert.match(id, /^chatcmpl-[A-Za-z0-9_-]{24}$/);
    const mixed = Array.from({ length: 3000 }, (_, i) => randomText([12, 16, 24][i % 3]!, 'hex'));
    mixed.forEach((t, i) => assert.equal(t.length, [12, 16, 24][i % 3]! * 2));
    assert.equal(new Set([...ids, ...mixed]).size, ids.length + mixed.length);
  });
});
