import { modelAllowed } from '../admit/index.js';
import type { Backend, TurnOutcome } from '../backends/index.js';
import { backendNotLoggedIn, isProxyError, type ProxyError } from '../errors/index.js';
import { overagePolicy, planScope } from '../plan/index.js';
import type { Route } from '../models/index.js';
import type { ParkedClaim } from '../run/index.js';
import type { Message } from '../core/index.js';
import { transcriptFor, type ModelTranscript } from './fit.js';
import { runOn, type Credential } from './model-turn.js';
import { toolsFor, type Stage } from './progress.js';
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
