import type { BackendEvent, TurnOutcome } from '../backends/index.js';
import { toReasoningSetting } from '../core/index.js';
import { ClientAbortedError, loginRefused } from '../errors/index.js';
import type { LoginAnswer } from '../logins/index.js';
import type { ProxyError } from '../errors/index.js';
import type { Route } from '../models/index.js';
import type { ParkedClaim, TurnInterrupt, TurnResult } from '../run/index.js';
import { ephemeral } from '../sessions/index.js';
import { outputSchemaOf } from '../transcript/index.js';
import { observeTokens, type ModelTranscript } from './fit.js';
import { forward } from './forward.js';
import { toolsFor, toSessionNote, type Stage } from './progress.js';
import type { ConversationEvent } from './types.js';

// One model's turn of the fallback chain (chain.ts): its lease, its run and its events passed on.

/** A key's login's credential for a CLI; undefined for the machine's own login. */
export type Credential = Exclude<LoginAnswer, ProxyError>;

/** One model of the chain: its id, route and transcript, the login's credential, its place in the chain. */
export interface Candidate {
  model: string;
  route: Route;
  conversation: ModelTranscript;
  login: Credential;
  index: number;
}

/**
 * A run on a key's own login that its provider refused says whose login it is and who renews it
 * (the CLI's error names the machine's login, which is not the one that failed); the login
 * remembers the refusal for the page until it is renewed or answers again.
 */
function ownLoginOutcome<O extends TurnOutcome>(s: Stage, login: string | undefined, backend: string, outcome: O): O {
  if (login === undefined) return outcome;
  if (outcome.ok) {
    s.deps.logins?.noteRun(login, backend, null);
    return outcome;
  }
  if (outcome.error.code !== 'backend_not_logged_in') return outcome;
  const detail = outcome.error.detail ?? 'authentication failed';
  s.deps.logins?.noteRun(login, backend, { detail });
  const owner = s.principal.role === 'owner';
  return { ...outcome, error: loginRefused({ login, backend, detail, owner }, outcome.error) };
}

/** One model's turn under the session lease (taken and released here), its events passed on. */
export async function* runOn(
  s: Stage,
  c: Candidate,
  signal: AbortSignal,
  claim: ParkedClaim | undefined,
): AsyncGenerator<ConversationEvent, Ended> {
  const { deps, principal, meta, input, p } = s;
  const { model, route, conversation, login, index } = c;
  const transcript = conversation.full;
  const tools = toolsFor(s);
  // A background request (a title, a check) runs once beside the key's conversations.
  const lease =
    deps.sessions && input.kind !== 'background'
      ? await deps.sessions.acquire(principal, route.backend.id, transcript, signal, conversation.whole, {
          spareActive: input.kind === 'subagent',
        })
      : ephemeral(transcript, conversation.whole);
  if (signal.aborted) {
    // Gone while a slot was found: no CLI is started, and the slot's session stays as it was.
    lease.release();
    throw new ClientAbortedError();
  }
  let gen: AsyncGenerator<BackendEvent, Ended> | undefined;
  const interrupt: TurnInterrupt = {};
  try {
    p.session = toSessionNote(lease);
    const schema = outputSchemaOf(input.responseFormat);
    const turn = {
      // A prompt that only drifted: the conversation's CLI keeps the one it has.
      system: lease.plan.keptSystem ?? transcript.system,
      cliModel: route.cliModel,
      ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
      reasoning: toReasoningSetting(input.reasoning),
      ...(schema ? { outputSchema: schema } : {}),
      ...(login ? { login } : {}),
    };
    const requestId = index === 0 ? meta.requestId : `${meta.requestId}-f${index}`;
    const run = { keyId: principal.keyId, requestId, backend: route.backend, turn, lease, signal, log: meta.log };
    gen = deps.runner.run({ ...run, tools, interrupt }, claim);
    const stopped = (sequence: string, outcome?: Ended, droppedCalls: readonly string[] = []) => {
      // Calls the client never gets can never be answered: the turn parked on them goes now.
      if (droppedCalls.length > 0) deps.runner.dropCalls(principal.keyId, droppedCalls);
      return stoppedAtSequence(sequence, outcome);
    };
    const ended = yield* forward(s, gen, model, route.backend.id, stopped, interrupt);
    const outcome = ownLoginOutcome(s, login?.name, route.backend.id, ended);
    p.session = toSessionNote(lease, outcome.sessionId);
    p.run = outcome.run ?? p.run;
    if (outcome.ok && !tools)
      observeTokens(deps, principal.keyId, route.backend.id, model, lease, conversation, outcome.usage);
    return outcome;
  } finally {
    try {
      if (gen) await gen.return(undefined as never);
    } finally {
      lease.release();
    }
  }
}

/** A turn's outcome, or a streamed one's cut at a stop sequence before it ended (how it ran unknown). */
type Ended = TurnResult | (TurnOutcome & { ok: true; run?: undefined });

/**
 * The outcome of a reply cut at the client's stop sequence. A streamed one is cut while its turn
 * runs: ending the turn there stops the CLI (no usage reported: the ledger estimates what was
 * sent). One answered in a body has its whole turn, and its usage stands.
 */
function stoppedAtSequence(sequence: string, outcome?: Ended): Ended {
  const stopReason = { type: 'stop_sequence', sequence } as const;
  if (!outcome) return { ok: true, stopReason, usage: null };
  // What failed after the sequence (a CLI that could not be interrupted) is past the answer's end.
  return outcome.ok ? { ...outcome, stopReason } : { ok: true, stopReason, usage: outcome.usage };
}
