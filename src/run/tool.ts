import type { BackendEvent, Turn } from '../backends/index.js';
import { toParked } from './parked.js';
import { callOf, openWorkspace, spawnIn } from './spawn.js';
import { step, type ToolLive } from './tool-step.js';
import type { RunDeps, RunInput, RunOutcome, ToolPlan } from './types.js';

/**
 * A turn that offers the client's functions through olp's MCP bridge. The CLI runs the model;
 * when the model's message ends in calls of those functions, the calls have streamed out as
 * events and the turn returns `finishReason: 'tool_calls'` with a parked turn: the process stays,
 * blocked on its MCP calls, until the client's next request brings the results (`resume`), the
 * parked turn expires, or the daemon stops. It runs without a session (the history goes in whole).
 */
export async function* runToolTurn(
  deps: RunDeps,
  input: RunInput,
  plan: ToolPlan,
): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, log } = input;
  const session = plan.deps.bridge.open(plan.tools);
  // The CLI's own MCP timeout sits above the parked turn's.
  const tools = {
    specs: plan.tools,
    url: session.url,
    endpoint: session.endpoint,
    token: session.token,
    timeoutMs: plan.deps.parkTtlMs + 60_000,
  };
  const turn: Turn = { ...plan.turn, tools };
  const ws = openWorkspace(deps, backend, turn, { keyId: input.keyId, requestId: input.requestId });
  const life = new AbortController();
  let state: ToolLive | undefined;
  let room: (() => void) | undefined;
  try {
    room = await deps.cap?.acquire(input.signal);
    // The process may wait, parked, several times as long as one turn: each step has its own bound.
    const limits = { ...deps.limits, timeoutMs: deps.limits.timeoutMs + 24 * 3600_000 };
    const proc = spawnIn(deps, backend, turn, ws, {
      prepared: (w) => backend.prepare(turn, w),
      limits,
      signal: life.signal,
      log,
      record: (p) => callOf(backend, turn, p, 'mcp.json'),
    });
    room?.();
    log.debug(
      { event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel, tools: plan.tools.length },
      'spawned',
    );
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
    };
    const live = state;
    void proc.exit.then(() => {
      live.gone = true;
    });
    return yield* step(state, input.signal, log, 'cold', toParked);
  } finally {
    room?.();
    if (!state) {
      ws.remove();
      session.close();
    }
  }
}
