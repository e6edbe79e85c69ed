// The run stage's one door to the core: a parked turn claimed for a request waits on again when the
// request lets go of its claim, unless a run took it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTurnRunner, planClaimed } from '../../src/run/index.js';
import type { ParkedTurns, RunDeps, RunInput, ToolParkedTurn } from '../../src/run/index.js';
import type { SessionPlan } from '../../src/sessions/index.js';
import { toCoreMessages, type ChatMessage } from '../../src/wire/index.js';

/** A registry holding one turn of key k1 parked on call c1, recording what is parked and retired. */
function registry() {
  const retired: string[] = [];
  const turn = {
    keyId: 'k1',
    model: 'sonnet',
    callIds: ['c1'],
    retire: async (reason: string) => void retired.push(reason),
  } as unknown as ToolParkedTurn;
  let waiting: ToolParkedTurn | undefined = turn;
  const parked = {
    take: (keyId: string, ids: readonly string[]) => {
      const hit = keyId === waiting?.keyId && ids.join() === waiting.callIds.join() ? waiting : undefined;
      if (hit) waiting = undefined;
      return hit;
    },
    retireAnswered: () => undefined,
    park: (t: ToolParkedTurn) => void (waiting = t),
  } as unknown as ParkedTurns;
  return { turn, parked, retired, waiting: () => waiting };
}

const answered = toCoreMessages([
  { role: 'user', content: 'go' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'done' },
] as ChatMessage[]);

describe('TurnRunner', () => {
  it('serves tools only with the bridge', () => {
    assert.equal(createTurnRunner({} as RunDeps).servesTools, false);
    assert.equal(createTurnRunner({ tools: { bridge: {}, parkTtlMs: 1 } } as unknown as RunDeps).servesTools, true);
  });

  it('claims nothing when no turn waits on the results (or no registry)', () => {
    const r = registry();
    const runner = createTurnRunner({ parked: r.parked } as unknown as RunDeps);
    assert.equal(runner.claimParked('k2', answered), undefined);
    assert.equal(runner.claimParked('k1', answered.slice(0, 1)), undefined);
    assert.equal(createTurnRunner({} as RunDeps).claimParked('k1', answered), undefined);
    assert.equal(r.waiting(), r.turn);
  });

  it('a claim no run took parks its turn again when the request lets go of it', () => {
    const r = registry();
    const runner = createTurnRunner({ parked: r.parked } as unknown as RunDeps);
    {
      using claim = runner.claimParked('k1', answered);
      assert.equal(claim?.plan?.turn, r.turn);
      assert.equal(r.waiting(), undefined, 'out of the registry while the request holds it');
    }
    assert.equal(r.waiting(), r.turn);
    assert.deepEqual(r.retired, []);
  });

  it('a claim a run took is not parked again', () => {
    const r = registry();
    const runner = createTurnRunner({ parked: r.parked } as unknown as RunDeps);
    const plan = { mode: 'ephemeral', text: 'x', turns: [] } as SessionPlan;
    {
      using claim = runner.claimParked('k1', answered);
      // Another model asked for: the plan takes the turn out of the claim and retires it.
      const input = { keyId: 'k1', backend: { id: 'claude' }, lease: { plan }, parked: claim } as unknown as RunInput;
      assert.equal(planClaimed(input, 'opus'), undefined);
      assert.equal(claim?.plan, undefined);
    }
    assert.equal(r.waiting(), undefined);
    assert.deepEqual(r.retired, ['model_changed']);
  });
});
