// How a CLI turn runs is decided in one place (src/run/plan.ts), and a run stops for one typed reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clientTooSlow,
  createRunStop,
  planClaimed,
  planToolTurn,
  planTurn,
  stopReasonOf,
  toStopOutcome,
} from '../../src/run/index.js';
import type { RunDeps, RunInput } from '../../src/run/index.js';
import type { SessionPlan } from '../../src/sessions/index.js';

/** A worker pool that hands out what the test gives it and records what it was asked to retire. */
function fakePool(o: { warm?: boolean; spare?: boolean; toolWorker?: boolean }) {
  const retired: string[] = [];
  const worker = { proc: { pid: 1 }, ...(o.toolWorker ? { tools: {} } : {}) };
  const pool = {
    maxAgeMs: 60_000,
    take: () => (o.warm ? worker : undefined),
    takeWhenUp: async () => (o.warm ? worker : undefined),
    takeSpare: async () => (o.spare ? worker : undefined),
    retireSlot: (_slot: string, reason: string) => void retired.push(reason),
    retire: async (_w: unknown, reason: string) => void retired.push(reason),
    settled: async () => undefined,
  };
  return { pool, retired };
}

function setup(
  plan: SessionPlan,
  o: { warm?: boolean; spare?: boolean; tools?: boolean; coldIsLive?: boolean; toolWorker?: boolean } = {},
) {
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
    lease: {
      plan,
      rotate(reason: string) {
        this.plan = { mode: 'fresh', sessionId: 's-rotated', slot: 0, text: 'whole', turns: [], reason } as SessionPlan;
      },
    },
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

describe('planToolTurn', () => {
  const tools = { tools: true };
  const cases: [string, SessionPlan, Parameters<typeof setup>[1], string, string, string[]][] = [
    ['ephemeral: on its own, whole', ephemeral, { ...tools, warm: true, toolWorker: true }, 'cold', 'ephemeral', []],
    ['fresh: spawned for the slot', fresh, tools, 'cold', 'fresh', ['superseded']],
    [
      'resumed, a worker with the same tools',
      resumed,
      { ...tools, warm: true, toolWorker: true },
      'warm',
      'resumed',
      [],
    ],
    [
      'resumed, a worker without tools',
      resumed,
      { ...tools, warm: true },
      'resumed',
      'resumed',
      ['mismatch', 'superseded'],
    ],
    ['resumed, no worker', resumed, tools, 'resumed', 'resumed', ['superseded']],
  ];
  for (const [name, plan, o, run, mode, retiredAs] of cases) {
    it(`${name}: ${run}`, async () => {
      const { deps, input, retired } = setup(plan, o);
      const p = await planToolTurn(deps, input);
      assert.equal(p.mode, 'tool');
      assert.equal(p.run, run);
      assert.equal(p.turn.session?.mode, mode);
      // A slot's turn may be kept as the slot's worker; one on its own never is.
      assert.equal(Boolean(p.pooled), plan.mode !== 'ephemeral');
      assert.equal(p.turn.live, plan.mode !== 'ephemeral');
      assert.deepEqual(retired, retiredAs);
      if (run === 'warm') assert.equal(p.write, 'turn\n');
      // The worker's fit carries the tools' fingerprint.
      if (p.pooled) assert.match(p.pooled.fit.tools, /^[0-9a-f]{64}$/);
    });
  }
});

describe('planClaimed', () => {
  const parkedOn = (slot: string | undefined, retired: string[]) => ({
    plan: {
      mode: 'parked' as const,
      results: new Map([['c1', 'sunny']]),
      turn: { keyId: 'k1', model: 'sonnet', callIds: ['c1'], slot, retire: async (r: string) => void retired.push(r) },
    },
  });
  const toolResults: SessionPlan = { ...resumed, turns: [{ role: 'tool', text: '<tool_result…>' }] };

  it('the lease resumes the slot the parked CLI serves: it goes on', () => {
    const { input } = setup(toolResults);
    const retired: string[] = [];
    const parked = parkedOn('k1/claude/0', retired);
    (input as { parked?: unknown }).parked = parked;
    const p = planClaimed(input, 'sonnet');
    assert.equal(p?.mode, 'parked');
    assert.equal(parked.plan, undefined, 'the claim is taken out');
    assert.deepEqual(retired, []);
  });

  it('another slot, or another model: the parked turn is retired and the slot starts over whole', () => {
    for (const [slot, model, reason] of [
      ['k1/claude/2', 'sonnet', 'superseded'],
      ['k1/claude/0', 'opus', 'model_changed'],
    ] as const) {
      const { input } = setup(toolResults);
      const retired: string[] = [];
      (input as { parked?: unknown }).parked = parkedOn(slot, retired);
      assert.equal(planClaimed(input, model), undefined);
      assert.deepEqual(retired, [reason]);
      assert.equal(input.lease.plan.mode, 'fresh');
      assert.equal(input.lease.plan.reason, 'parked_gone');
    }
  });

  it('tool results no CLI waits for: whole again; new user turns: resumed', () => {
    const { input } = setup(toolResults);
    assert.equal(planClaimed(input, 'sonnet'), undefined);
    assert.equal(input.lease.plan.reason, 'parked_gone');
    const other = setup({ ...resumed, turns: [{ role: 'user', text: 'next' }] });
    assert.equal(planClaimed(other.input, 'sonnet'), undefined);
    assert.equal(other.input.lease.plan.mode, 'resumed');
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
