import type { Turn } from '../backends/index.js';
import { reasoningKey, toolResultText, type Message, type ToolResultPart } from '../core/index.js';
import { systemHash, type SessionPlan } from '../sessions/index.js';
import type { Image } from '../transcript/index.js';
import { sha256 } from '../ids/index.js';
import type { ToolSpec } from '../tools/index.js';
import { workerSlot, type WorkerFit } from '../workers/index.js';
import type { SlotReset } from '../workspace/index.js';
import type { ColdPlan, LivePlan, ParkedPlan, ParkedTurns, Pooled, RunDeps, RunInput, TurnBase } from './types.js';

/**
 * How long a new conversation waits for its slot's spare that is still starting: it was started
 * after the key's last turn, so it is usually milliseconds from up, and nearer than a cold start.
 */
const SPARE_WAIT_MS = 2000;
/** How long a continued turn waits for its slot's worker to come up when one is starting. */
export const STARTING_WAIT_MS = 2000;

/** The images of the turns being sent, if any. */
function imagesOf(turns: readonly { images?: Image[] }[]): { images?: Image[] } {
  const images = turns.flatMap((t) => t.images ?? []);
  return images.length ? { images } : {};
}

/**
 * The login a live CLI holds, as its fit says it: the login's name and its credential (hashed),
 * so that a rotated token or another login retires the CLI instead of serving with the old one.
 */
export function loginFit(turn: Pick<Turn, 'login'>): string {
  const l = turn.login;
  return l
    ? `${l.name}:${sha256(`${l.token ?? ''}\u0000${l.file ?? ''}${l.apiKey ? `\u0000${l.apiKey}` : ''}`).slice(0, 16)}`
    : '';
}

/** The turn the CLI runs, from what the request asks and the lease's session plan: built once, here. */
export function toTurn(base: TurnBase, plan: SessionPlan): Turn {
  const { system, ...rest } = base;
  return {
    ...rest,
    prompt: { system, text: plan.text, ...imagesOf(plan.turns) },
    session: {
      mode: plan.mode,
      ...(plan.sessionId ? { sessionId: plan.sessionId } : {}),
      ...(plan.slot !== undefined ? { slot: plan.slot } : {}),
      ...(plan.previousSessionId ? { previousSessionId: plan.previousSessionId } : {}),
      ...(plan.forkOf ? { forkOf: plan.forkOf } : {}),
    },
    // A slot's session may be continued by a live worker (when the daemon keeps them).
    live: plan.mode !== 'ephemeral',
  };
}

/** What a live worker must have been started with to serve this turn (see `WorkerFit`). */
export function fitOf(turn: Turn, sessionId: string, tools: readonly ToolSpec[] = []): WorkerFit {
  // A claude keeps the schema it was started with: a process fits only turns with the same one.
  const system = turn.outputSchema
    ? systemHash(`${turn.prompt.system ?? ''}\u0000${JSON.stringify(turn.outputSchema)}`)
    : systemHash(turn.prompt.system);
  return {
    sessionId,
    cliModel: turn.cliModel,
    system,
    maxOutputTokens: turn.maxOutputTokens,
    // By names and schemas: a description that drifts (Claude Code 2.1.197 names its model's
    // context size in Bash's) changes nothing the CLI can call.
    tools: tools.length ? sha256(JSON.stringify(tools.map((t) => [t.name, t.parameters]))) : '',
    login: loginFit(turn),
    reasoning: reasoningKey(turn.reasoning),
  };
}

/**
 * How one CLI turn without the client's functions runs (those: `planToolTurn`): the one place
 * that reads the lease's plan and the worker pool for it. A continued session goes to the slot's
 * warm worker when one fits; a
 * new one to the slot's spare (waited for up to SPARE_WAIT_MS); else a fresh process, kept as the
 * slot's worker where the CLI can be one. A live plan carries its fall-back: a cold run.
 */
export async function planTurn(deps: RunDeps, input: RunInput): Promise<ColdPlan | LivePlan> {
  const { backend, log } = input;
  const planned = input.lease.plan;
  const turn = toTurn(input.turn, planned);
  const session = turn.session!;
  const pool =
    turn.live && backend.live && session.slot !== undefined && session.sessionId && session.mode !== 'ephemeral'
      ? deps.workers
      : undefined;
  const mode = session.mode === 'resumed' ? 'resumed' : 'cold';
  if (!pool || !session.sessionId || session.slot === undefined)
    return { mode, session: planned, turn: { ...turn, live: false }, live: false };
  const live = backend.live!;
  const slot = workerSlot(input.keyId, backend.id, session.slot);
  const fit = fitOf(turn, session.sessionId);
  const pooled: Pooled = { pool, slot, fit, turn, session: planned };
  if (session.mode === 'resumed') {
    const worker = await pool.takeWhenUp(slot, fit, STARTING_WAIT_MS);
    if (worker) {
      const fallback = () => {
        log.info(
          { event: 'worker_fallback', slot, pid: worker.proc.pid },
          'the live worker did not answer; running the turn cold',
        );
        return planCold(deps, input, pooled);
      };
      return {
        mode: 'warm',
        session: planned,
        turn,
        worker,
        write: live.input(turn.prompt, fit.sessionId, turn.outputSchema),
        fallback,
        pooled,
      };
    }
  } else if (session.forkOf) {
    // A fork reads the old session's file: its worker must have exited (and flushed it) first.
    pool.retireSlot(slot, 'rotated');
  } else {
    pool.retireSlot(slot, 'rotated');
    const spare = await pool.takeSpare(slot, fit, SPARE_WAIT_MS);
    if (spare) {
      // The slot starts over under the spare's feet: its old session's files go, before the first line.
      deps.workspaces.resetSlot(
        input.keyId,
        `${backend.id}-${session.slot}`,
        backend.links(turn),
        await freshReset(deps, input, pooled),
      );
      const fallback = () => {
        log.info(
          { event: 'worker_fallback', slot, pid: spare.proc.pid },
          'the pre-started CLI did not answer; running the turn cold',
        );
        return planCold(deps, input, pooled);
      };
      const write =
        live.spare!.init(turn.prompt.system, turn.outputSchema) + live.input(turn.prompt, '', turn.outputSchema);
      return { mode: 'prestarted', session: planned, turn, worker: spare, write, fallback, pooled };
    }
  }
  return planCold(deps, input, pooled);
}

/** A pooled slot's turn in a fresh process: once the slot's other CLIs are out of its way. */
export async function planCold(deps: RunDeps, input: RunInput, pooled: Pooled): Promise<ColdPlan> {
  const { pool, slot, fit, turn } = pooled;
  const session = turn.session!;
  const planned = pooled.session;
  // A worker still starting for this slot (codex) must not load a session a resumed turn
  // changes, and a retired one may still be flushing it; a fresh turn's session is new.
  pool.retireSlot(slot, 'superseded');
  let reset: SlotReset | undefined;
  if (session.mode === 'fresh' && !session.forkOf) reset = await freshReset(deps, input, pooled);
  else await pool.settled(slot);
  const mode = session.mode === 'resumed' ? 'resumed' : 'cold';
  if (input.backend.live!.coldIsLive) return { mode, session: planned, turn, live: { pool, slot, fit }, reset, pooled };
  return { mode, session: planned, turn: { ...turn, live: false }, live: false, reset, pooled };
}

/**
 * How a fresh turn starts its slot over when the slot's old worker was just retired. Where only
 * the old session's files go (its id is known), they go in the background once that worker has
 * exited, and the turn starts at once: a CLI that flushes its session on the way out takes longer
 * than the whole turn of a fast one (1.3 ms of a 5 ms request with a native fake; far more with
 * a real CLI). A whole-store reset renames the directory, so it waits for the worker first.
 */
export async function freshReset(deps: RunDeps, input: RunInput, pooled: Pooled): Promise<SlotReset> {
  const session = pooled.turn.session!;
  const staleSession = session.previousSessionId;
  const gone = pooled.pool.settled(pooled.slot);
  if (deps.workspaces.prunes(input.keyId, `${input.backend.id}-${session.slot}`, staleSession))
    return { staleSession, after: gone };
  await gone;
  return { staleSession };
}

/**
 * The turn parked on exactly the calls whose results end the conversation, taken out of the
 * registry (before admission: it is this request's own, not a newer one's to make room for).
 * Parked turns of the key whose calls the conversation answered earlier and moved past are
 * retired: no request will continue them.
 */
export function planParked(
  parked: ParkedTurns | undefined,
  keyId: string,
  messages: readonly Message[],
): ParkedPlan | undefined {
  if (!parked) return undefined;
  const answered = trailingToolResults(messages);
  const turn = answered ? parked.take(keyId, answered.ids) : undefined;
  parked.retireAnswered(keyId, toolResultIds(messages));
  return turn && answered ? { mode: 'parked', turn, results: answered.results } : undefined;
}

/**
 * A user message of tool results answering calls by id: what a client sends back for a parked
 * turn. The last message may carry text after its results: Claude Code puts the user's next words
 * (and its reminders) there, in the same message. Anything else (an image, a legacy result) is
 * not for a parked turn.
 */
function resultsOf(m: Message, last: boolean): { results: ToolResultPart[]; text: string } | undefined {
  if (m.role !== 'user') return undefined;
  const results = m.parts.filter((p): p is ToolResultPart => p.type === 'tool_result' && p.name === undefined);
  const texts = m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
  if (results.length === 0 || results.length + texts.length !== m.parts.length) return undefined;
  if (texts.length > 0 && !last) return undefined;
  return { results, text: texts.join('\n') };
}

/**
 * The tool results that end the conversation: the last assistant message's tool call ids, when
 * every one of them is answered by the tool results after it (and nothing else follows but text
 * in the last message, which the model reads after its message's last result).
 */
function trailingToolResults(
  messages: readonly Message[],
): { ids: string[]; results: Map<string, string> } | undefined {
  let i = messages.length - 1;
  const results = new Map<string, string>();
  while (i >= 0) {
    const found = resultsOf(messages[i]!, i === messages.length - 1);
    if (!found) break;
    // From the end, as the results are read back: the order the parked turn takes them in.
    [...found.results].reverse().forEach((r, j) => {
      const said = j === 0 && found.text.trim() !== '' ? `\n\n${found.text}` : '';
      results.set(r.callId, toolResultText(r) + said);
    });
    i--;
  }
  const call = messages[i];
  if (call?.role !== 'assistant' || results.size === 0) return undefined;
  const ids = call.parts.flatMap((p) => (p.type === 'tool_call' && p.id !== '' ? [p.id] : []));
  if (ids.length === 0 || ids.some((id) => !results.has(id))) return undefined;
  return { ids, results };
}

/** The tool call ids the conversation carries results for. */
function toolResultIds(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages)
    for (const p of m.parts) if (p.type === 'tool_result' && p.name === undefined) ids.add(p.callId);
  return ids;
}
