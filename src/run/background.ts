import { randomUUID } from 'node:crypto';
import type { Prepared, Turn } from '../backends/index.js';
import type { RunningProcess } from '../process/index.js';
import { workerSlot, type Worker, type WorkerFit, type WorkerPool } from '../workers/index.js';
import type { BridgeSession, ToolSpec } from '../tools/index.js';
import type { Workspace } from '../workspace/index.js';
import { bridgeTools, openWorkspace, spawnIn } from './spawn.js';
import type { Pooled, RunDeps, RunInput, RunOutcome } from './types.js';
import { stopProcess } from './stop.js';
import { loginFit } from './plan.js';
import { reasoningKey } from '../core/index.js';

/** How long a starting live CLI (a spare, a resuming worker) may take to come up before it is given up. */
const READY_MS = 30_000;

/**
 * Off the response path, after a turn of a slot that live workers serve: a worker for the next
 * turn when the cold process cannot be one (codex), and a spare for this key's next new conversation.
 */
export function afterTurn(
  deps: RunDeps,
  input: RunInput,
  pooled: Pooled,
  outcome: RunOutcome,
  withTools?: { tools: readonly ToolSpec[]; kept: boolean },
): void {
  if (!outcome.ok) return;
  const { pool, fit } = pooled;
  const live = input.backend.live!;
  const spawned = withTools ? !withTools.kept : outcome.run === 'cold' || outcome.run === 'resumed';
  if (!live.coldIsLive && spawned) {
    const sessionId = outcome.sessionId ?? fit.sessionId;
    setImmediate(() => startResumed(deps, input, pooled, { ...fit, sessionId }, withTools?.tools));
  }
  // A spare has no tools (a CLI takes its MCP servers when it starts): an agent's next new
  // conversation could not use it.
  if (deps.prestart && live.spare && !withTools) setImmediate(() => startSpare(deps, input, pool));
}

/** Whether a live CLI's output says it is up within READY_MS (false: it failed, ended or was slow). */
async function waitReady(
  backend: RunInput['backend'],
  proc: RunningProcess,
  lines: AsyncIterator<string>,
  life: AbortController,
): Promise<boolean> {
  const timer = setTimeout(() => stopProcess(life, 'done'), READY_MS);
  try {
    for (;;) {
      const step = await lines.next();
      if (step.done) return false;
      const up = backend.live!.ready(step.value);
      if (up !== undefined) {
        proc.hold();
        return up;
      }
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts a live CLI off the response path, in a workspace of the slot, and registers it with the
 * pool as `starting` until its output says it is up (`live.ready`). Never throws.
 */
function launch(
  deps: RunDeps,
  input: RunInput,
  pool: WorkerPool,
  turn: Turn,
  how: {
    slot: string;
    index: number;
    prepare(ws: Workspace): Prepared;
    fit: WorkerFit;
    spare: boolean;
    tools?: BridgeSession | undefined;
  },
): void {
  const { backend, log } = input;
  // Started in the background: only into room no turn is waiting for, and never while its login's
  // expiring token is being refreshed by another run.
  if ((deps.cap && !deps.cap.hasRoom()) || deps.refresh?.busy(backend, turn)) {
    how.tools?.close();
    return;
  }
  try {
    const ws = openWorkspace({ ...deps, replay: false }, backend, turn, {
      keyId: input.keyId,
      requestId: `${how.spare ? 'spare' : 'worker'}-${randomUUID()}`,
      slot: `${backend.id}-${how.index}`,
    });
    const life = new AbortController();
    let proc: RunningProcess;
    try {
      proc = spawnIn(deps, backend, turn, ws, {
        prepared: how.prepare,
        limits: { ...deps.limits, timeoutMs: pool.maxAgeMs + deps.limits.timeoutMs },
        signal: life.signal,
        log,
        live: true,
      });
    } catch (err) {
      ws.remove();
      how.tools?.close();
      throw err;
    }
    const lines = proc.lines[Symbol.asyncIterator]();
    const t = Date.now();
    const worker: Worker = {
      proc,
      lines,
      ws,
      life,
      cost: 0,
      tools: how.tools,
      slot: how.slot,
      keyId: input.keyId,
      fit: how.fit,
      startedAt: t,
      lastUsedAt: t,
      turns: 0,
      state: how.spare ? 'spare' : 'starting',
    };
    const ready = waitReady(backend, proc, lines, life);
    if (how.spare) pool.addSpare({ worker, backend: backend.id, ready, isReady: false });
    else pool.addStarting(worker, ready);
    log.debug(
      { event: how.spare ? 'spare_started' : 'worker_starting', pid: proc.pid, slot: how.slot, model: turn.cliModel },
      how.spare ? 'pre-started a CLI for the next new conversation' : 'starting a live worker for the next turn',
    );
  } catch (err) {
    log.warn({ event: 'live_start_failed', err }, 'could not start a live CLI');
  }
}

/**
 * A spare CLI in the slot a new conversation of this key would take next (the session pool
 * says which), for the model it just used: no conversation, no system prompt, up once it answers a ping.
 */
function startSpare(deps: RunDeps, input: RunInput, pool: WorkerPool): void {
  const { backend } = input;
  if (!deps.prestart) return;
  const next = deps.prestart.sessions.nextFresh(input.keyId, backend.id);
  if (next === undefined || !pool.wantsSpare(input.keyId, backend.id, workerSlot(input.keyId, backend.id, next)))
    return;
  if (deps.prestart.availableMemory() < deps.prestart.minFreeBytes) return;
  const { maxOutputTokens, reasoning } = input.turn;
  const turn: Turn = {
    prompt: { system: null, text: '' },
    cliModel: input.turn.cliModel,
    ...(maxOutputTokens ? { maxOutputTokens } : {}),
    ...(reasoning ? { reasoning } : {}),
    session: { mode: 'fresh', slot: next },
    live: true,
    prestart: true,
    ...(input.turn.login ? { login: input.turn.login } : {}),
  };
  const fit: WorkerFit = {
    sessionId: '',
    cliModel: turn.cliModel,
    system: '',
    maxOutputTokens: turn.maxOutputTokens,
    tools: '',
    login: loginFit(turn),
    reasoning: reasoningKey(turn.reasoning),
  };
  launch(deps, input, pool, turn, {
    slot: workerSlot(input.keyId, backend.id, next),
    index: next,
    prepare: (ws) => backend.prepare(turn, ws),
    fit,
    spare: true,
  });
}

/**
 * A worker that loads the session a cold turn just left (codex: `app-server` and `thread/resume`),
 * with the client's tools on a bridge session of its own when the conversation offers them.
 */
function startResumed(
  deps: RunDeps,
  input: RunInput,
  pooled: Pooled,
  fit: WorkerFit,
  specs?: readonly ToolSpec[],
): void {
  const { backend } = input;
  const { pool, slot } = pooled;
  const index = pooled.turn.session!.slot!;
  if (!backend.live?.resume || !pool.hasRoom()) return;
  if (specs && !deps.tools) return;
  const session = specs ? deps.tools!.bridge.open(specs) : undefined;
  const tools = session ? bridgeTools(specs!, session, deps.tools!.parkTtlMs) : undefined;
  const turn: Turn = {
    ...pooled.turn,
    session: { mode: 'resumed', sessionId: fit.sessionId, slot: index },
    ...(tools ? { tools } : {}),
  };
  launch(deps, input, pool, turn, {
    slot,
    index,
    prepare: (ws) => backend.live!.resume!(turn, ws),
    fit,
    spare: false,
    tools: session,
  });
}
