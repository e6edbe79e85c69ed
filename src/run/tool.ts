import type { BackendEvent, Turn } from '../backends/index.js';
import type { RunningProcess } from '../process/index.js';
import { workerSlot } from '../workers/index.js';
import { afterTurn } from './background.js';
import { toParked } from './parked.js';
import { bridgeTools, callOf, openWorkspace, spawnIn, waitToStart, waitToWrite } from './spawn.js';
import { step, type ToolLive } from './tool-step.js';
import type { RunDeps, RunInput, RunOutcome, ToolPlan } from './types.js';
import { stopProcess } from './stop.js';

/** A warm worker that shows no sign of life this long after a write is replaced by a fresh run. */
const WARM_START_MS = 2000;

/**
 * A turn that offers the client's functions through olp's MCP bridge. The CLI runs the model;
 * when the model's message ends in calls of those functions, the calls have streamed out as
 * events and the turn returns a `tool_use` stop with a parked turn: the process stays,
 * blocked on its MCP calls, until the client's next request brings the results (`resume`), the
 * parked turn expires, or the daemon stops. A CLI of a pooled slot that gives its final answer
 * stays as the slot's worker, its tools with it: the conversation's next user turn is written to
 * it. Returns undefined when a warm worker showed no sign of life (nothing was yielded).
 */
export async function* runToolTurn(
  deps: RunDeps,
  input: RunInput,
  plan: ToolPlan,
): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  if (plan.worker) return yield* runWarmTool(deps, input, plan);
  const { backend, log } = input;
  const session = plan.deps.bridge.open(plan.tools);
  const turn: Turn = { ...plan.turn, tools: bridgeTools(plan.tools, session, plan.deps.parkTtlMs) };
  const slot = turn.session?.mode !== 'ephemeral' ? turn.session?.slot : undefined;
  const fresh = turn.session?.mode === 'fresh' && !turn.session.forkOf;
  const ws = openWorkspace(deps, backend, turn, {
    keyId: input.keyId,
    requestId: input.requestId,
    ...(slot !== undefined
      ? {
          slot: `${backend.id}-${slot}`,
          ...(fresh ? { resetSlot: plan.reset ?? { staleSession: turn.session?.previousSessionId } } : {}),
        }
      : {}),
  });
  const life = new AbortController();
  let state: ToolLive | undefined;
  let room: ((proc?: RunningProcess) => void) | undefined;
  let proc: RunningProcess | undefined;
  try {
    room = await waitToStart(deps, backend, turn, input.signal, input.keyId);
    // The process may wait, parked, several times as long as one turn: each step has its own bound.
    const limits = { ...deps.limits, timeoutMs: deps.limits.timeoutMs + 24 * 3600_000 };
    proc = spawnIn(deps, backend, turn, ws, {
      prepared: (w) => backend.prepare(turn, w),
      limits,
      signal: life.signal,
      log,
      record: (p) => callOf(backend, turn, p, 'mcp.json'),
    });
    room(proc);
    log.debug(
      { event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel, tools: plan.tools.length },
      'spawned',
    );
    // A claude that answered serves the slot's next turns itself; a codex is followed by a worker.
    const keeps = plan.pooled && backend.live?.coldIsLive;
    state = {
      deps,
      backend,
      keyId: input.keyId,
      model: turn.cliModel,
      proc,
      lines: proc.lines[Symbol.asyncIterator](),
      parser: backend.createParser(),
      ws,
      session,
      life,
      gone: false,
      read: 0,
      cost: 0,
      slotKey: slot !== undefined ? workerSlot(input.keyId, backend.id, slot) : undefined,
      pooled: keeps ? plan.pooled : undefined,
      after: afterFinal(deps, input, plan),
    };
    const live = state;
    void proc.exit.then(() => {
      live.gone = true;
    });
    return yield* step(state, input.signal, log, plan.run === 'resumed' ? 'resumed' : 'cold', toParked);
  } finally {
    room?.();
    if (!state) {
      // Never started (or the client left while it waited for room): nothing of it stays.
      stopProcess(life, 'turn_closed');
      if (proc) await proc.exit;
      ws.remove();
      session.close();
    }
  }
}

/** The slot's warm worker takes the turn: its tools are the request's (the plan checked their fingerprint). */
async function* runWarmTool(
  deps: RunDeps,
  input: RunInput,
  plan: ToolPlan,
): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  const { backend, log } = input;
  const w = plan.worker!;
  const pool = plan.pooled!.pool;
  const written = await waitToWrite(deps, backend, plan.turn, input.signal);
  w.proc.expect();
  if (!(await w.proc.write(plan.write!))) {
    written();
    await pool.retire(w, 'no_answer');
    return undefined;
  }
  log.debug(
    { event: 'worker_turn', pid: w.proc.pid, slot: w.slot, turn: w.turns + 1, mode: 'warm' },
    'turn written to a live CLI',
  );
  const state: ToolLive = {
    deps,
    backend,
    keyId: input.keyId,
    model: plan.turn.cliModel,
    proc: w.proc,
    lines: w.lines,
    parser: backend.live?.parser?.() ?? backend.createParser(),
    ws: w.ws,
    session: w.tools!,
    life: w.life,
    gone: false,
    read: 0,
    cost: w.cost,
    slotKey: w.slot,
    pooled: plan.pooled,
    worker: w,
    after: afterFinal(deps, input, plan),
  };
  void w.proc.exit.then(() => {
    state.gone = true;
  });
  const silent = setTimeout(() => {
    if (state.read === 0) stopProcess(w.life, 'done');
  }, WARM_START_MS);
  try {
    const gen = step(state, input.signal, log, 'warm', toParked);
    let next = await gen.next();
    while (!next.done) {
      yield next.value;
      next = await gen.next();
    }
    // Not a line from it: the caller runs the turn afresh (nothing was yielded).
    if (!next.value.ok && state.read === 0 && !input.signal.aborted) return undefined;
    return next.value;
  } finally {
    written();
    clearTimeout(silent);
  }
}

/** What follows a pooled tool turn's final answer, off the response path (see `afterTurn`). */
function afterFinal(deps: RunDeps, input: RunInput, plan: ToolPlan): ToolLive['after'] {
  const pooled = plan.pooled;
  if (!pooled) return undefined;
  return (outcome, kept) => afterTurn(deps, input, pooled, outcome, { tools: plan.tools, kept });
}
