import type { Backend, Prepared, Turn } from '../backends/index.js';
import type { Logger } from '../log/index.js';
import type { CallMeta, RunLimits, RunningProcess } from '../process/index.js';
import type { BridgeSession, ToolSpec } from '../tools/index.js';
import { toChildEnv, type SlotReset, type Workspace } from '../workspace/index.js';
import type { RunDeps } from './types.js';

/** A workspace for one CLI process of a turn: the backend's links and home directories, in the slot when it has one. */
export function openWorkspace(
  deps: RunDeps,
  backend: Backend,
  turn: Turn,
  o: { keyId: string; requestId: string; slot?: string | undefined; resetSlot?: SlotReset | undefined },
): Workspace {
  return deps.workspaces.create({
    keyId: o.keyId,
    requestId: o.requestId,
    links: deps.replay ? [] : backend.links(turn),
    ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}),
    ...(o.slot !== undefined ? { slot: o.slot, ...(o.resetSlot ? { resetSlot: o.resetSlot } : {}) } : {}),
  });
}

/**
 * Waits until the turn's CLI may start: its login's turn to refresh an expiring token (one
 * refresher per login file, see logins/refresh.ts), then room under the process cap. The ticket
 * is called with the process once it runs (or without, when none started); later calls do nothing.
 */
export async function waitToStart(
  deps: RunDeps,
  backend: Backend,
  turn: Turn,
  signal: AbortSignal,
  keyId: string,
): Promise<(proc?: RunningProcess) => void> {
  const gate = await deps.refresh?.enter(backend, turn, signal);
  let room: ((proc?: RunningProcess) => void) | undefined;
  try {
    room = await deps.cap?.acquire(signal, keyId);
  } catch (err) {
    gate?.release();
    throw err;
  }
  let done = false;
  return (proc) => {
    if (done) return;
    done = true;
    room?.(proc);
    if (gate && proc) gate.started(proc.exit);
    else gate?.release();
  };
}

/**
 * Waits until a turn may be written to a live CLI: its login's turn to refresh an expiring token,
 * as for a start. The returned function ends the turn's hold (the turn is over, or parked).
 */
export async function waitToWrite(
  deps: RunDeps,
  backend: Backend,
  turn: Turn,
  signal: AbortSignal,
): Promise<() => void> {
  const gate = await deps.refresh?.enter(backend, turn, signal);
  if (!gate) return () => undefined;
  let end!: () => void;
  gate.started(new Promise<void>((r) => (end = r)));
  return end;
}

/** How a process is started in its workspace. */
export interface SpawnSpec {
  /** The backend's invocation and files for the turn (`backend.prepare` unless a live start says otherwise). */
  prepared: (ws: Workspace) => Prepared;
  limits: RunLimits;
  signal: AbortSignal;
  log: Logger;
  /** Started to live on between turns (a spare, a worker loading a session). */
  live?: boolean;
  /** What a recording keeps of the call (its files by name, those to leave out filtered). */
  record?: (prepared: Prepared) => CallMeta;
}

/** The one place a turn's CLI is started: its files written, its environment built, its process run. */
export function spawnIn(deps: RunDeps, backend: Backend, turn: Turn, ws: Workspace, spec: SpawnSpec): RunningProcess {
  const prepared = spec.prepared(ws);
  for (const f of prepared.files) ws.writeFile(f.name, f.content);
  const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
  const invocation = { ...prepared.invocation, env, cwd: ws.cwd, ...(spec.live ? { live: true } : {}) };
  if (spec.record) return deps.supervisor.run(invocation, spec.limits, spec.signal, spec.log, spec.record(prepared));
  return deps.supervisor.run(invocation, spec.limits, spec.signal, spec.log);
}

/** The call as a recording keeps it: backend, model, and stdin with the files written (`skip`: by name). */
export function callOf(backend: Backend, turn: Turn, prepared: Prepared, skip?: string): CallMeta {
  const files = prepared.files.filter((f) => f.name !== skip).map((f) => f.content);
  return { backend: backend.id, model: turn.cliModel, prompt: [prepared.invocation.stdin, ...files].join('\u0000') };
}

/** The client's tools as a CLI is given them: olp's MCP endpoint for one bridge session. */
export function bridgeTools(
  specs: readonly ToolSpec[],
  session: BridgeSession,
  parkTtlMs: number,
): NonNullable<Turn['tools']> {
  // The CLI's own MCP timeout sits above the parked turn's.
  return { specs, url: session.url, endpoint: session.endpoint, token: session.token, timeoutMs: parkTtlMs + 60_000 };
}
