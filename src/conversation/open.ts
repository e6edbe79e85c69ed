import { estimateTokens, type Permit, type RateCounted } from '../admit/index.js';
import type { Principal } from '../auth/index.js';
import type { Usage } from '../backends/index.js';
import type { Message } from '../core/index.js';
import { ClientAbortedError, ownLoginRequired, toProxyError, type ProxyError } from '../errors/index.js';
import { stopReasonOf, toStopOutcome } from '../run/index.js';
import { charsToTokens, estimateTurnTokens, fetchRemoteImages } from '../transcript/index.js';
import { runChain } from './chain.js';
import { transcriptFor, type ModelTranscript } from './fit.js';
import { newProgress, toolsFor, type Progress, type Stage } from './progress.js';
import { finish } from './result.js';
import type {
  Conversation,
  ConversationDeps,
  ConversationEvent,
  ConversationInput,
  ConversationResult,
  RequestMeta,
} from './types.js';

/** The request as counted against the key's requests per minute when it was opened. */
type Counted = { rate: RateCounted | undefined; rateError?: unknown };

/**
 * A key's request, from admission to its one ledger row: routing, the key's limits, the fallback
 * chain, the session lease (taken and released here), and the CLI turn. Knows no wire format.
 * The request is counted against the key's requests-per-minute when it is opened, so one that
 * then fails validation (`reject`) still counts.
 */
export function openConversation(deps: ConversationDeps, principal: Principal, meta: RequestMeta): Conversation {
  let counted: Counted;
  try {
    counted = { rate: deps.admission.countRequest(principal) };
  } catch (err) {
    counted = { rate: undefined, rateError: err };
  }
  const p = newProgress();
  return {
    run: (input: ConversationInput, signal: AbortSignal) =>
      runConversation({ deps, principal, meta, input, p }, counted, signal),
    accept<T>(parse: () => T): T {
      let parsed: T;
      try {
        parsed = parse();
      } catch (error) {
        // Over its requests-per-minute, a key hears that first, whatever else is wrong.
        p.error = toProxyError(counted.rateError ?? error);
        if (p.error.code === 'internal_error') meta.log.error({ err: error }, 'internal error');
        throw finish(deps, principal, meta, p).error;
      }
      return parsed;
    },
    get result() {
      return p.result;
    },
  };
}

/** The run was stopped: by olp with its own error (a client that does not read), or by the client leaving. */
function noteStop(p: Progress, signal: AbortSignal, usage: Usage | null): void {
  const stopped = toStopOutcome(stopReasonOf(signal));
  if ('error' in stopped) p.error = stopped.error;
  else {
    p.aborted = true;
    p.usage = usage ?? p.usage;
  }
}

/** Opening: the model routed and allowed, remote images fetched, the transcript made and its prompt counted. */
async function open(s: Stage, signal: AbortSignal): Promise<{ messages: Message[]; conversation: ModelTranscript }> {
  const { deps, principal, input, p } = s;
  // Before anything runs: a member on the machine's login where each must use their own.
  if (deps.memberLogins === 'required' && principal.role === 'member' && principal.login === null)
    throw ownLoginRequired(s.meta.pageUrl?.() ?? '/olp');
  const first = deps.registry.resolve(input.model);
  deps.admission.checkModel(principal, input.model);
  const messages = await fetchRemoteImages(input.messages, deps.imageLimits);
  if (signal.aborted) throw new ClientAbortedError(); // left while remote images were fetched
  // Bad content (an undecodable image, a part the CLI cannot take) is a 400 before admission;
  // one too long to send whole is refused only if it must be (see transcriptFor).
  const conversation = transcriptFor(
    deps,
    principal.keyId,
    messages,
    input.responseFormat,
    input.model,
    first.backend,
    toolsFor(s),
  );
  // The budget holds what a re-sent conversation would cost (a continued one costs less).
  const sent = conversation.whole.ok ? conversation.whole.transcript : conversation.full;
  p.promptTokens = estimateTurnTokens(sent.turns, sent.system, conversation.rate);
  return { messages, conversation };
}

/** Admission: the key's concurrency and budget. Undefined when the client left while queued. */
async function admit(s: Stage, rate: RateCounted | undefined, signal: AbortSignal): Promise<Permit | undefined> {
  const { deps, principal, meta, input, p } = s;
  let permit: Permit;
  try {
    permit = await deps.admission.admit(principal, estimateTokens(p.promptTokens, input.maxOutputTokens), signal, rate);
  } catch (err) {
    if (err instanceof ClientAbortedError) {
      p.aborted = true; // left while queued: already out of the queue
      return undefined;
    }
    Object.assign(p.headers, (err as ProxyError).headers);
    throw err;
  }
  p.queueMs = permit.waitedMs;
  Object.assign(p.headers, permit.headers);
  meta.log.debug({ event: 'admitted', key: principal.name, queueMs: permit.waitedMs }, 'admitted');
  return permit;
}

/** A request's whole run: opening, admission, its parked turn or the fallback chain, and its result. */
async function* runConversation(
  s: Stage,
  counted: Counted,
  signal: AbortSignal,
): AsyncGenerator<ConversationEvent, ConversationResult> {
  const { deps, principal, meta, input, p } = s;
  p.model = input.model;
  const done = () => finish(deps, principal, meta, p);
  let permit: Permit | undefined;
  const onAbort = () => {
    // Gone: from now on the key's budget holds what it was sent, not the whole reservation.
    permit?.reserve(p.promptTokens + charsToTokens(p.sentChars));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (counted.rateError) throw counted.rateError;
    const { messages, conversation } = await open(s, signal);
    // The turn parked on this request's tool results is its own, claimed before admission (not a
    // newer request's to retire for room). Held until the request ends, however it ends: a turn
    // no run took (refused, gone, another model served it, a failure) then waits on, as it did.
    using claim = deps.runner.claimParked(principal.keyId, messages);
    permit = await admit(s, counted.rate, signal);
    if (!permit) return done();
    if (signal.aborted) throw new ClientAbortedError(); // left in the tick it was admitted
    const outcome = yield* runChain(s, messages, conversation, signal, claim);
    if (outcome) {
      p.usage = outcome.usage;
      if (outcome.ok) p.stopReason = outcome.stopReason;
      else p.error = outcome.error;
    }
  } catch (err) {
    // A client that went away (or was stopped for not reading) ends here too.
    if (err instanceof ClientAbortedError || signal.aborted)
      noteStop(p, signal, (err as { usage?: Usage | null }).usage ?? null);
    else {
      p.error = toProxyError(err);
      if (p.error.code === 'internal_error') meta.log.error({ err }, 'internal error');
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Closed early by its consumer after the client left, or after olp stopped the reply.
    if (!p.result && signal.aborted && !p.error && !p.aborted) noteStop(p, signal, null);
    permit?.release();
    done();
  }
  return done();
}
