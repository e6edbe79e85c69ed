import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newRequestId } from '../../src/http/app.js';

describe('request ids', () => {
  it('are req_ and 32 hex digits, and do not repeat across refills of their pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) assert.match(id, /^req_[0-9a-f]{32}$/);
    assert.equal(new Set(ids).size, ids.length);
  });
});
