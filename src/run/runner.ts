import type { BackendEvent, TurnOutcome } from '../backends/index.js';
import { offeredTools, type ToolRequest } from '../tools/index.js';
import type { Message } from '../core/index.js';
import { planParked } from './plan.js';
import { runTurn } from './turn.js';
import type { ParkedPlan, ParkedTurns, RunDeps, RunInput, RunMode } from './types.js';

/** One CLI turn as the conversation core asks for it: its own tool request, not the specs offered. */
export type TurnRequest = Omit<RunInput, 'tools' | 'parked'> & {
  /** The client's functions, when the runner serves them (`servesTools`). */
  tools?: ToolRequest | undefined;
};

/** How a turn ended and how it ran. A turn that stopped at the client's calls is already parked. */
export type TurnResult = TurnOutcome & { run: RunMode };

/**
 * The turn parked on exactly the calls whose results a request brings, taken out of the registry
 * for that request. Disposed (by the request, however it ends), it waits on again as it did,
 * unless a run took it (`plan` cleared: the run continued it, or retired it).
 */
export interface ParkedClaim extends Disposable {
  plan: ParkedPlan | undefined;
}

/**
 * The run stage as the conversation core sees it: whether the client's functions are served, the
 * claim of a parked turn (before admission), and a turn run under a lease. How the turn runs
 * (continued parked turn, tool turn, warm, prestarted, resumed or cold) is decided behind it.
 */
export interface TurnRunner {
  /** The client's functions are offered to the CLIs (olp's MCP bridge runs). */
  readonly servesTools: boolean;
  /** The key's turn parked on the calls whose results end these messages, claimed for this request. */
  claimParked(keyId: string, messages: readonly Message[]): ParkedClaim | undefined;
  /** Runs one turn; with a claim, the parked turn goes on (or is retired when the lease says otherwise). */
  run(request: TurnRequest, claim?: ParkedClaim): AsyncGenerator<BackendEvent, TurnResult>;
  /**
   * The client never got these calls (its reply ended at a stop sequence before them): the turn
   * parked on them can never go on, and is retired now rather than when it expires.
   */
  dropCalls(keyId: string, callIds: readonly string[]): void;
}

/** The run stage behind its one door, over the daemon's processes, workers and parked turns. */
export function createTurnRunner(deps: RunDeps): TurnRunner {
  return {
    servesTools: deps.tools !== undefined,
    claimParked: (keyId, messages) => claimParked(deps.parked, keyId, messages),
    run: (request, claim) => runRequested(deps, request, claim),
    dropCalls: (keyId, callIds) => deps.parked?.retireAnswered(keyId, new Set(callIds), 'unanswerable'),
  };
}

/** A claim on the parked turn these messages continue (see `planParked`); none when no turn waits on them. */
function claimParked(
  parked: ParkedTurns | undefined,
  keyId: string,
  messages: readonly Message[],
): ParkedClaim | undefined {
  const plan = planParked(parked, keyId, messages);
  if (!plan || !parked) return undefined;
  return {
    plan,
    [Symbol.dispose]() {
      // Refused, gone, served by another model or failed before a run took it: it waits on.
      if (this.plan) parked.park(this.plan.turn);
      this.plan = undefined;
    },
  };
}

/** The request's turn, run; one that stops at calls of the client's functions waits, parked, for their results. */
async function* runRequested(
  deps: RunDeps,
  request: TurnRequest,
  claim: ParkedClaim | undefined,
): AsyncGenerator<BackendEvent, TurnResult> {
  const { tools, ...rest } = request;
  const input: RunInput = {
    ...rest,
    ...(tools ? { tools: offeredTools(tools) } : {}),
    ...(claim?.plan ? { parked: claim } : {}),
  };
  const outcome = yield* runTurn(deps, input);
  if (outcome.parked) deps.parked?.park(outcome.parked);
  return outcome;
}
