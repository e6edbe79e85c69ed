import { modelAllowed } from '../admit/index.js';
import type { BackendEvent, TurnOutcome } from '../backends/index.js';
import type { Message } from '../core/index.js';
import {
  backendNotLoggedIn,
  ClientAbortedError,
  isProxyError,
  loginRefused,
  type ProxyError,
} from '../errors/index.js';
import { overagePolicy, planScope } from '../plan/index.js';
import { runTurn, type ParkedPlan, type RunOutcome } from '../run/index.js';
import { ephemeral } from '../sessions/index.js';
import { offeredTools } from '../tools/index.js';
import { outputSchemaOf } from '../transcript/index.js';
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

/** Tries each model of the chain in turn (see ARCHITECTURE section 12). */
export async function* runChain(
  s: Stage,
  messages: readonly Message[],
  first: ModelTranscript,
  signal: AbortSignal,
  claimed?: ParkedPlan,
): AsyncGenerator<ConversationEvent, TurnOutcome | undefined> {
  // The turn parked on this request's tool results goes to the first model's run, which takes it
  // (or retires it); one no run took waits on, as it did.
  const parked = { plan: claimed };
  try {
    return yield* tryChain(s, messages, first, signal, parked);
  } finally {
    if (parked.plan) s.deps.parked?.park(parked.plan.turn);
  }
}

async function* tryChain(
  s: Stage,
  messages: readonly Message[],
  first: ModelTranscript,
  signal: AbortSignal,
  parked: { plan: ParkedPlan | undefined },
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
    let route;
    try {
      route = deps.registry.resolve(candidate);
    } catch (err) {
      if (i === 0) throw err;
      meta.log.warn({ event: 'fallback_skipped', model: candidate }, 'fallback model is not served here');
      continue;
    }
    let conversation = first;
    if (i > 0) {
      try {
        conversation = transcriptFor(
          deps,
          principal.keyId,
          messages,
          input.responseFormat,
          candidate,
          route.backend,
          toolsFor(s),
        );
        if (!conversation.whole.ok) throw conversation.whole.error;
      } catch (err) {
        meta.log.warn(
          { event: 'fallback_skipped', model: candidate, err: (err as Error).message },
          'the conversation does not fit the fallback model',
        );
        continue;
      }
    }
    const transcript = conversation.full;
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
    // The key's login decides the credential the CLI gets; one without a credential for this CLI
    // (or removed) does not borrow another's: the chain may go on to a CLI the login has.
    const login = deps.logins?.use(principal.login, route.backend.id);
    if (isProxyError(login)) {
      meta.log.info({ event: 'login_refused', backend: route.backend.id, login: principal.login }, login.message);
      last = { ok: false, error: login, usage: null };
      if (fallBack(login)) continue;
      return last;
    }
    // While the login's plan window is spent (or only extra usage is left and this key may not
    // draw on it), the CLI is not started: it would only say so again.
    const refused = deps.plans?.refusal(planScope(route.backend.id, principal.login), overagePolicy(principal));
    if (refused) {
      meta.log.info({ event: 'plan_refused', backend: route.backend.id, code: refused.code }, refused.message);
      last = { ok: false, error: refused, usage: null };
      if (fallBack(refused)) continue;
      return last;
    }
    // A CLI olp already knows is logged out is not started: codex would retry for minutes.
    const known = principal.login === null ? deps.detector.known(route.backend) : undefined;
    if (known?.login === 'not_logged_in') {
      last = {
        ok: false,
        error: backendNotLoggedIn(
          route.backend.id,
          "olp's last status check found no login",
          known.fixes[0] ?? 'log the CLI in',
        ),
        usage: null,
      };
      if (fallBack(last.error)) continue;
      return last;
    }
    const tools = toolsFor(s);
    const lease = deps.sessions
      ? await deps.sessions.acquire(principal, route.backend.id, transcript, signal, conversation.whole)
      : ephemeral(transcript, conversation.whole);
    if (signal.aborted) {
      // Gone while a slot was found: no CLI is started, and the slot's session stays as it was.
      lease.release();
      throw new ClientAbortedError();
    }
    let gen: AsyncGenerator<BackendEvent, Ended> | undefined;
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
      const requestId = i === 0 ? meta.requestId : `${meta.requestId}-f${i}`;
      gen = runTurn(deps.turns, {
        keyId: principal.keyId,
        requestId,
        backend: route.backend,
        turn,
        lease,
        signal,
        log: meta.log,
        ...(tools ? { tools: offeredTools(tools) } : {}),
        ...(i === 0 && parked.plan ? { parked } : {}),
      });
      const outcome = ownLoginOutcome(
        s,
        login?.name,
        route.backend.id,
        yield* forward(s, gen, candidate, route.backend.id, stoppedAtSequence),
      );
      p.session = toSessionNote(lease, outcome.sessionId);
      p.run = outcome.run ?? p.run;
      if (outcome.ok && !tools)
        observeTokens(deps, principal.keyId, route.backend.id, candidate, lease, conversation, outcome.usage);
      if (outcome.parked) deps.parked?.park(outcome.parked);
      if (!outcome.ok && !p.started && fallBack(outcome.error)) {
        last = outcome;
        continue;
      }
      return outcome;
    } finally {
      try {
        if (gen) await gen.return(undefined as never);
      } finally {
        lease.release();
      }
    }
  }
  return last;
}

/** A turn's outcome, or a streamed one's cut at a stop sequence before it ended (how it ran unknown). */
type Ended = RunOutcome | (TurnOutcome & { ok: true; run?: undefined; parked?: undefined });

/**
 * The outcome of a reply cut at the client's stop sequence. A streamed one is cut while its turn
 * runs: ending the turn there stops the CLI (no usage reported: the ledger estimates what was
 * sent). One answered in a body has its whole turn: its usage stands, and calls after the
 * sequence are not the client's to answer (a turn parked on them is retired).
 */
function stoppedAtSequence(sequence: string, outcome?: Ended): Ended {
  const stopReason = { type: 'stop_sequence', sequence } as const;
  if (!outcome) return { ok: true, stopReason, usage: null };
  if (!outcome.ok) return outcome;
  const { parked, ...rest } = outcome;
  if (parked) void parked.retire('stop_sequence');
  return { ...rest, stopReason };
}
