// How a CLI turn runs is decided in one place (src/run/plan.ts), and a run stops for one typed reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientTooSlow, createRunStop, planTurn, stopReasonOf, toStopOutcome } from '../../src/run/index.js';
import type { RunDeps, RunInput } from '../../src/run/index.js';
import type { SessionPlan } from '../../src/sessions/index.js';

/** A worker pool that hands out what the test gives it and records what it was asked to retire. */
function fakePool(o: { warm?: boolean; spare?: boolean }) {
  const retired: string[] = [];
  const worker = { proc: { pid: 1 } };
  const pool = {
    maxAgeMs: 60_000,
    take: () => (o.warm ? worker : undefined),
    takeSpare: async () => (o.spare ? worker : undefined),
    retireSlot: (_slot: string, reason: string) => void retired.push(reason),
    settled: async () => undefined,
  };
  return { pool, retired };
}

function setup(plan: SessionPlan, o: { warm?: boolean; spare?: boolean; tools?: boolean; coldIsLive?: boolean } = {}) {
  const { pool, retired } = fakePool(o);
  const deps = {
    workspaces: { resetSlot: () => undefined, prunes: () => true },
    workers: pool,
    ...(o.tools ? { tools: { bridge: {}, parkTtlMs: 1000 } } : {}),
  } as unknown as RunDeps;
  const live = { coldIsLive: o.coldIsLive ?? true, input: () => 'turn\n', spare: { init: () => 'init\n' } };
  const input = {
    keyId: 'k1',
    requestId: 'req_1',
    backend: { id: 'claude', live, links: () => [] },
    turn: { system: 'be brief', cliModel: 'sonnet' },
    lease: { plan },
    signal: new AbortController().signal,
    log: { info: () => undefined, debug: () => undefined },
    ...(o.tools ? { tools: [{ name: 'f' }] } : {}),
  } as unknown as RunInput;
  return { deps, input, retired };
}

const fresh: SessionPlan = { mode: 'fresh', sessionId: 's-new', slot: 0, text: 'hi', turns: [] };
const resumed: SessionPlan = { mode: 'resumed', sessionId: 's-old', slot: 0, text: 'more', turns: [] };
const ephemeral: SessionPlan = { mode: 'ephemeral', text: 'hi', turns: [] };

describe('planTurn', () => {
  const cases: [string, SessionPlan, Parameters<typeof setup>[1], string, boolean][] = [
    ['the client offered functions', fresh, { tools: true, warm: true }, 'tool', false],
    ['ephemeral', ephemeral, { warm: true }, 'cold', false],
    ['resumed, the slot has a fitting worker', resumed, { warm: true }, 'warm', true],
    ['resumed, no worker', resumed, {}, 'resumed', true],
    ['fresh, the slot has a spare', fresh, { spare: true }, 'prestarted', true],
    ['fresh, no spare', fresh, {}, 'cold', true],
    ['fresh, no spare, a CLI whose cold process cannot be a worker', fresh, { coldIsLive: false }, 'cold', false],
    ['a fork on rotation', { ...fresh, forkOf: 's-old' }, { spare: true }, 'cold', true],
  ];
  for (const [name, plan, o, mode, live] of cases) {
    it(`${name}: ${mode}`, async () => {
      const { deps, input } = setup(plan, o);
      const p = await planTurn(deps, input);
      assert.equal(p.mode, mode);
      // The Turn is built once, from the lease's plan.
      assert.equal(p.turn.prompt.text, plan.text);
      assert.equal(p.turn.prompt.system, 'be brief');
      assert.equal(p.turn.live, live);
      assert.equal(p.session, plan);
    });
  }

  it('a live plan falls back to a cold run once the slot is out of its way', async () => {
    const { deps, input, retired } = setup(resumed, { warm: true });
    const p = await planTurn(deps, input);
    assert.ok(p.mode === 'warm');
    const cold = await p.fallback();
    assert.equal(cold.mode, 'resumed');
    assert.deepEqual(retired, ['superseded']);
  });
});

describe('stop reasons', () => {
  it('the first stop wins; later ones change nothing', () => {
    const stop = createRunStop();
    assert.equal(stop.reason, undefined);
    const slow = clientTooSlow(120);
    assert.equal(stop.stop(slow), true);
    assert.equal(stop.stop({ type: 'client_disconnect' }), false);
    assert.equal(stop.signal.aborted, true);
    assert.deepEqual(stopReasonOf(stop.signal), slow);
  });

  it('one function maps a stop to how the request ends', () => {
    const slow = clientTooSlow(5);
    const mapped = toStopOutcome(slow);
    assert.ok('error' in mapped && mapped.error.code === 'client_read_timeout');
    assert.deepEqual(toStopOutcome({ type: 'client_disconnect' }), { aborted: true });
    // A signal stopped without a typed reason counts as the client leaving.
    const c = new AbortController();
    c.abort('client_disconnect');
    assert.deepEqual(toStopOutcome(stopReasonOf(c.signal)), { aborted: true });
  });
});
