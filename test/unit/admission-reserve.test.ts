// Token budgets and what requests in flight hold of them: an agent's huge reply cap does not lock
// its key's budget, and a budget held only by requests in flight is not "spent".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAdmission, estimateTokens, RESERVED_REPLY_MAX } from '../../src/admit/index.js';
import { DEFAULT_POLICY } from '../../src/store/index.js';

const who = (dailyTokens: number, used = 0) => ({
  keyId: 'k',
  name: 'kid',
  role: 'member' as const,
  policy: { ...DEFAULT_POLICY, dailyTokens },
  used,
});

function admission(used: number) {
  return createAdmission({
    maxConcurrent: 8,
    queueSize: 8,
    queueTimeoutMs: 1000,
    tokensSince: () => used,
  });
}

describe('budgets and requests in flight', () => {
  it('a reply cap counts against the budget up to RESERVED_REPLY_MAX (Claude Code asks 128,000)', () => {
    assert.equal(estimateTokens(500, 128_000), 500 + RESERVED_REPLY_MAX);
    assert.equal(estimateTokens(500, 2000), 2500);
    assert.equal(estimateTokens(500, undefined), 1524);
  });

  it('with a budget of 50,000, three of an agent’s requests run at once; one held only by those in flight is told to wait, not that the budget is spent', async () => {
    const a = admission(10_000);
    const k = who(50_000);
    const signal = new AbortController().signal;
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await a.admit(k, estimateTokens(2000, 128_000), signal));
    await assert.rejects(a.admit(k, estimateTokens(2000, 128_000), signal), (e: { code: string; message: string }) => {
      assert.equal(e.code, 'concurrency_limit_exceeded');
      assert.match(e.message, /taken up by its 4 request\(s\) in flight/);
      return true;
    });
    for (const p of held) p.release();
    const spent = admission(50_000);
    await assert.rejects(
      spent.admit(k, estimateTokens(2000, 128_000), signal),
      (e: { code: string }) => e.code === 'budget_exceeded',
    );
  });
});
