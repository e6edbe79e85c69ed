import { modelAllowed } from '../admit/index.js';
import type { Backend, BackendEvent, TurnOutcome } from '../backends/index.js';
import {
  backendNotLoggedIn,
  ClientAbortedError,
  isProxyError,
  loginRefused,
  type ProxyError,
} from '../errors/index.js';
import { overagePolicy, planScope } from '../plan/index.js';
import type { LoginAnswer } from '../logins/index.js';
import type { Route } from '../models/index.js';
import type { ParkedClaim, TurnInterrupt, TurnResult } from '../run/index.js';
import { ephemeral } from '../sessions/index.js';
import { outputSchemaOf } from '../transcript/index.js';
import type { Message } from '../core/index.js';
import { observeTokens, transcriptFor, type ModelTranscript } from './fit.js';
import { forward } from './forward.js';
import { toolsFor, toSessionNote, type Stage } from './progress.js';
import type { ConversationEvent } from './types.js';

/** Failures that another model in the fallback chain may avoid (before any output only). */
function isFallbackable(e: ProxyError): boolean {
  return (
    e.code === 'backend_not_installed' ||
    e.code === 'backend_not_logged_in' ||
    e.code === 'backend_overloaded' ||
    e.code === 'backend_rate_limited' ||
    e.code === 'plan_limit_reached' ||
    e.code === 'login_not_set_up' ||
    e.code === 'login_refused'
  );
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

/**
 * Tries each model of the chain in turn (see ARCHITECTURE section 12). The turn parked on this
 * request's tool results (`claim`) goes to the first model's run, which takes it (or retires it).
 */
export async function* runChain(
  s: Stage,
  messages: readonly Message[],
  first: ModelTranscript,
  signal: AbortSignal,
  claim?: ParkedClaim,
): AsyncGenerator<ConversationEvent, TurnOutcome | undefined> {
  const { deps, principal, meta, input, p } = s;
  const chain = [
    input.model,
    ...(deps.fallbacks[input.model] ?? []).filter(
      (m) => !principal.policy.models || modelAllowed(principal.policy.models, m),
    ),
  ];
  let last: TurnOutcome | undefined;
  for (const [i, candidate] of chain.entries()) {
    let route: Route;
    try {
      route = deps.registry.resolve(candidate);
    } catch (err) {
      if (i === 0) throw err;
      meta.log.warn({ event: 'fallback_skipped', model: candidate }, 'fallback model is not served here');
      continue;
    }
    const conversation = i === 0 ? first : fallbackTranscript(s, messages, candidate, route.backend);
    if (!conversation) continue;
    p.backend = route.backend.id;
    p.servedModel = candidate;
    const next = chain[i + 1];
    const fallBack = (error: ProxyError): boolean => {
      if (!isFallbackable(error) || next === undefined) return false;
      meta.log.warn(
        { event: 'fallback', from: candidate, to: next, code: error.code },
        `falling back from ${candidate} to ${next}`,
      );
      return true;
    };
    const start = startable(s, route.backend);
    if ('refused' in start) {
      last = { ok: false, error: start.refused, usage: null };
      if (fallBack(start.refused)) continue;
      return last;
    }
    const c = { model: candidate, route, conversation, login: start.login, index: i };
    const outcome = yield* runOn(s, c, signal, i === 0 ? claim : undefined);
    if (!outcome.ok && !p.started && fallBack(outcome.error)) {
      last = outcome;
      continue;
    }
    return outcome;
  }
  return last;
}

/** A fallback model's own transcript of the conversation, or undefined (logged) when it does not fit. */
function fallbackTranscript(
  s: Stage,
  messages: readonly Message[],
  candidate: string,
  backend: Backend,
): ModelTranscript | undefined {
  const { deps, principal, meta, input } = s;
  try {
    const conversation = transcriptFor(
      deps,
      principal.keyId,
      messages,
      input.responseFormat,
      candidate,
      backend,
      toolsFor(s),
    );
    if (!conversation.whole.ok) throw conversation.whole.error;
    return conversation;
  } catch (err) {
    meta.log.warn(
      { event: 'fallback_skipped', model: candidate, err: (err as Error).message },
      'the conversation does not fit the fallback model',
    );
    return undefined;
  }
}

/**
 * The credential this model's CLI runs with, or why it is not started at all (logged): the CLI
 * would only fail, or say so again.
 */
function startable(s: Stage, backend: Backend): { login: Credential } | { refused: ProxyError } {
  const { deps, principal, meta } = s;
  // The key's login decides the credential the CLI gets; one without a credential for this CLI
  // (or removed) does not borrow another's: the chain may go on to a CLI the login has.
  const login = deps.logins?.use(principal.login, backend.id);
  if (isProxyError(login)) {
    meta.log.info({ event: 'login_refused', backend: backend.id, login: principal.login }, login.message);
    return { refused: login };
  }
  // While the login's plan window is spent (or only extra usage is left and this key may not
  // draw on it), the CLI is not started: it would only say so again.
  const refused = deps.plans?.refusal(planScope(backend.id, principal.login), overagePolicy(principal));
  if (refused) {
    meta.log.info({ event: 'plan_refused', backend: backend.id, code: refused.code }, refused.message);
    return { refused };
  }
  // A CLI olp already knows is logged out is not started: codex would retry for minutes.
  const known = principal.login === null ? deps.detector.known(backend) : undefined;
  if (known?.login === 'not_logged_in') {
    const fix = known.fixes[0] ?? 'log the CLI in';
    return { refused: backendNotLoggedIn(backend.id, "olp's last status check found no login", fix) };
  }
  return { login };
}

/** A key's login's credential for a CLI; undefined for the machine's own login. */
type Credential = Exclude<LoginAnswer, ProxyError>;

/** One model of the chain: its id, route and transcript, the login's credential, its place in the chain. */
interface Candidate {
  model: string;
  route: Route;
  conversation: ModelTranscript;
  login: Credential;
  index: number;
}

/** One model's turn under the session lease (taken and released here), its events passed on. */
async function* runOn(
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
      system: transcript.system,
      cliModel: route.cliModel,
      ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
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
