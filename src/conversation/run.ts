import { estimateTokens, modelAllowed, type Permit, type RateCounted } from '../admit/index.js';
import type { Principal } from '../auth/index.js';
import type { BackendEvent, FinishReason, TurnOutcome, Usage } from '../backends/index.js';
import { backendNotLoggedIn, backendRetryMidStream, ClientAbortedError, toProxyError, type ProxyError } from '../errors/index.js';
import { overagePolicy } from '../plan/index.js';
import { ephemeral, type Lease } from '../sessions/index.js';
import { charsToTokens, createFenceStripper, estimateTurnTokens, fetchRemoteImages, isJsonFormat, outputSchemaOf, type ResponseFormat } from '../transcript/index.js';
import { planParked, runParked, runTurn, stopReasonOf, toStopOutcome, type ParkedPlan, type RunMode, type RunOutcome } from '../run/index.js';
import { offeredTools, type ToolRequest } from '../tools/index.js';
import type { ChatMessage } from '../validate/index.js';
import { observeTokens, transcriptFor, type ModelTranscript } from './fit.js';
import { recordResult } from './ledger.js';
import type { Conversation, ConversationDeps, ConversationEvent, ConversationInput, ConversationResult, FinishedRequest, Outcome, RequestMeta, SessionNote } from './types.js';

/** Failures that another model in the fallback chain may avoid (before any output only). */
function isFallbackable(e: ProxyError): boolean {
  return e.code === 'backend_not_installed' || e.code === 'backend_not_logged_in' || e.code === 'backend_overloaded' || e.code === 'backend_rate_limited' || e.code === 'plan_limit_reached';
}

/** Everything a running conversation learns, turned into its immutable result at the end. */
interface Progress {
  backend: string | null;
  servedModel: string | null;
  session: SessionNote | null;
  run: RunMode | null;
  queueMs: number | null;
  firstTokenMs: number | null;
  usage: Usage | null;
  finishReason: FinishReason;
  error: ProxyError | null;
  aborted: boolean;
  /** A plan report during the turn said it drew on paid extra usage. */
  overage: boolean;
  started: boolean;
  promptTokens: number;
  sentChars: number;
  headers: Record<string, string>;
}

function toSessionNote(lease: Lease, nativeId?: string): SessionNote {
  const p = lease.plan;
  const id = nativeId ?? p.sessionId;
  return { mode: p.mode, ...(id ? { id } : {}), ...(p.reason ? { reason: p.reason } : {}) };
}

/**
 * A key's request, from admission to its one ledger row: routing, the key's limits, the fallback
 * chain, the session lease (taken and released here), and the CLI turn. Knows no wire format.
 * The request is counted against the key's requests-per-minute when it is opened, so one that
 * then fails validation (`reject`) still counts.
 */
export function openConversation(deps: ConversationDeps, principal: Principal, meta: RequestMeta): Conversation {
  let rate: RateCounted | undefined;
  let rateError: unknown;
  try {
    rate = deps.admission.countRequest(principal);
  } catch (err) {
    rateError = err;
  }
  let result: ConversationResult | undefined;
  const p: Progress = {
    backend: null,
    servedModel: null,
    session: null,
    run: null,
    queueMs: null,
    firstTokenMs: null,
    usage: null,
    finishReason: 'stop',
    error: null,
    aborted: false,
    started: false,
    promptTokens: 0,
    sentChars: 0,
    headers: {},
    overage: false,
  };
  let model: string | null = null;

  /** The result, written once: the ledger row follows it. */
  function finish(): ConversationResult {
    if (result) return result;
    const estimated = !p.usage && p.sentChars > 0 && (p.aborted || p.error !== null);
    const usage: Usage | null = estimated ? estimate(p.promptTokens, p.sentChars) : p.usage;
    const outcome: Outcome = p.aborted ? 'client_aborted' : !p.error ? 'ok' : p.error.code === 'backend_timeout' ? 'timeout' : p.backend === null ? 'rejected' : 'error';
    const status = p.aborted ? 499 : !p.error ? 200 : meta.stream && p.started ? 200 : p.error.status;
    result = Object.freeze({
      outcome,
      error: p.error,
      finishReason: p.finishReason,
      usage,
      estimated,
      model,
      backend: p.backend,
      servedModel: p.servedModel,
      session: p.session,
      run: p.run,
      overage: p.overage,
      queueMs: p.queueMs,
      firstTokenMs: p.firstTokenMs,
      durationMs: Math.round(performance.now() - meta.started),
      status,
      headers: { ...p.headers, ...(p.backend ? deps.plans?.headers(p.backend) : {}), ...(p.session ? { 'x-olp-session-mode': p.session.mode } : {}) },
    });
    // Off the response path: the client has its answer before the row is written.
    const final = result;
    const provider = deps.backends.find((b) => b.id === final.backend)?.owner ?? null;
    setImmediate(() => {
      recordResult(deps.store, principal, meta, final, p.sentChars > 0 || p.aborted, provider);
      if (deps.finished?.hasSubscribers) deps.finished.publish({ principal, meta, result: final } satisfies FinishedRequest);
    });
    return result;
  }

  /** The request's tools, when the bridge runs (both CLIs offer them through it). */
  function toolsFor(): ToolRequest | undefined {
    return currentTools && deps.turns.tools ? currentTools : undefined;
  }
  let currentTools: ToolRequest | undefined;
  let currentFormat: ResponseFormat | undefined;

  /**
   * Passes a turn's events on as the conversation's, announcing the answer at its first sign. A
   * reply answered in one body is held until the turn ends, so that an attempt the CLI abandons
   * (its provider's stream broke and it asked the model again) is dropped unseen. A streamed one
   * that already carries text of such an attempt goes on only if the retried attempt says that
   * text again first (it is held back until it has, then only the rest is sent); otherwise it
   * ends with `backend_retry_mid_stream`.
   */
  async function* forward<R>(gen: AsyncGenerator<BackendEvent, R>, model: string, backend: string): AsyncGenerator<ConversationEvent, R> {
    // A JSON reply reaches the client without the code fence a model may wrap it in; one the
    // CLI was given another form of the schema for is made to fit the client's, whole.
    let fences = isJsonFormat(currentFormat) ? createFenceStripper() : undefined;
    const schema = outputSchemaOf(currentFormat);
    const fit = schema ? deps.backends.find((b) => b.id === backend)?.fitReply : undefined;
    let whole = '';
    const held: BackendEvent[] | undefined = meta.stream ? undefined : [];
    // Streamed: text the client has of an abandoned attempt, and what the retried one said so far.
    let owed: { text: string; said: string; events: number } | undefined;
    // Streamed reply events sent since the last tool call event (an abandoned attempt of text only?).
    let textRun = 0;
    function* deliver(ev: BackendEvent, counted: boolean): Generator<ConversationEvent> {
      if (ev.type === 'text' && fences) {
        const text = fences.push(ev.text);
        if (fit) whole += text;
        else if (text) yield* pass({ type: 'text', text }, model, backend, counted);
      } else yield* pass(ev, model, backend, counted);
    }
    let step = await gen.next();
    while (!step.done) {
      const ev = step.value;
      if (ev.type === 'abandoned') {
        if (held) held.splice(Math.max(0, held.length - ev.events));
        else if (owed) owed = { ...owed, said: '', events: 0 }; // the retry's text was held back, never sent
        else if (!p.started) {
          // Nothing reached the client yet (all of it held for the fence or the schema): start over.
          whole = '';
          if (fences) fences = createFenceStripper();
        } else if (!fences && ev.events <= textRun && ev.text !== '') {
          owed = { text: ev.text, said: '', events: 0 };
          textRun -= ev.events;
        } else throw backendRetryMidStream(backend);
      } else if (held && (ev.type === 'text' || ev.type === 'tool_call' || ev.type === 'tool_args')) {
        held.push(ev);
        yield* note(ev, model, backend);
      } else if (owed && ev.type === 'text') {
        owed.said += ev.text;
        owed.events++;
        const n = Math.min(owed.said.length, owed.text.length);
        if (owed.said.slice(0, n) !== owed.text.slice(0, n)) throw backendRetryMidStream(backend);
        if (owed.said.length >= owed.text.length) {
          const rest = owed.said.slice(owed.text.length);
          // The retried attempt's events so far: what the client has of it is what it said.
          textRun += owed.events;
          owed = undefined;
          if (rest) yield* deliver({ type: 'text', text: rest }, false);
        }
      } else if (owed && (ev.type === 'tool_call' || ev.type === 'tool_args')) {
        throw backendRetryMidStream(backend);
      } else {
        if (ev.type === 'text') textRun++;
        else if (ev.type === 'tool_call' || ev.type === 'tool_args') textRun = 0;
        yield* deliver(ev, false);
      }
      step = await gen.next();
    }
    // The retried answer ended short of what the client already has.
    if (owed && (step.value as { ok?: boolean } | undefined)?.ok !== false) throw backendRetryMidStream(backend);
    for (const ev of held ?? []) yield* deliver(ev, true);
    const rest = (fences?.end() ?? '');
    // (A failed turn's partial reply is not sent: its error still gets a proper status.)
    if (fit && schema && whole + rest !== '') {
      if ((step.value as { ok?: boolean } | undefined)?.ok !== false) yield* pass({ type: 'text', text: fit(whole + rest, schema) }, model, backend, held !== undefined);
    } else if (rest) yield* pass({ type: 'text', text: rest }, model, backend, held !== undefined);
    return step.value;
  }

  /** The answer's first sign announces it (headers); its text counts as sent (see `estimate`). */
  function* note(ev: BackendEvent & { type: 'text' | 'tool_call' | 'tool_args' }, model: string, backend: string): Generator<ConversationEvent> {
    if (!p.started) {
      p.started = true;
      const session = p.session ?? { mode: 'ephemeral' };
      // The login's plan as last known (this turn's report may come only after its text).
      yield { type: 'started', model, backend, session, headers: { ...p.headers, ...deps.plans?.headers(backend), 'x-olp-session-mode': session.mode } };
    }
    p.firstTokenMs ??= performance.now() - meta.started;
    if (ev.type !== 'tool_call') p.sentChars += ev.text.length;
  }

  /** One event on to the client; `noted` when `note` has seen it already (a held reply's). */
  function* pass(ev: BackendEvent, model: string, backend: string, noted = false): Generator<ConversationEvent> {
    if (ev.type === 'plan') {
      deps.plans?.report(backend, ev.report);
      if (ev.report.overage) p.overage = true;
      return;
    }
    if (ev.type !== 'text' && ev.type !== 'tool_call' && ev.type !== 'tool_args') return;
    if (!noted) yield* note(ev, model, backend);
    yield ev.type === 'text' ? { type: 'text', text: ev.text } : ev;
  }

  /**
   * The client's tool results for the turn parked on exactly these calls: that CLI goes on.
   * Undefined when it is gone: the conversation then runs as usual, tools still offered.
   */
  async function* continueParked(input: ConversationInput, claimed: ParkedPlan, signal: AbortSignal): AsyncGenerator<ConversationEvent, RunOutcome | undefined> {
    const route = deps.registry.resolve(input.model);
    if (route.cliModel === claimed.turn.model) {
      p.backend = route.backend.id;
      p.servedModel = input.model;
      p.session = { mode: 'ephemeral' };
    }
    const gen = runParked(claimed, route.cliModel, signal, meta.log);
    try {
      const outcome = yield* forward(gen, input.model, route.backend.id);
      if (outcome?.parked) deps.parked?.park(outcome.parked);
      if (outcome) p.run = outcome.run;
      return outcome;
    } finally {
      await gen.return(undefined);
    }
  }

  /** Tries each model of the chain in turn (see ARCHITECTURE section 12). */
  async function* runChain(input: ConversationInput, messages: readonly ChatMessage[], first: ModelTranscript, signal: AbortSignal): AsyncGenerator<ConversationEvent, TurnOutcome | undefined> {
    const chain = [input.model, ...(deps.fallbacks[input.model] ?? []).filter((m) => !principal.policy.models || modelAllowed(principal.policy.models, m))];
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
          conversation = transcriptFor(deps, principal.keyId, messages, input.responseFormat, candidate, route.backend, toolsFor());
          if (!conversation.whole.ok) throw conversation.whole.error;
        } catch (err) {
          meta.log.warn({ event: 'fallback_skipped', model: candidate, err: (err as Error).message }, 'the conversation does not fit the fallback model');
          continue;
        }
      }
      const transcript = conversation.full;
      p.backend = route.backend.id;
      p.servedModel = candidate;
      const next = chain[i + 1];
      const fallBack = (error: ProxyError): boolean => {
        if (!isFallbackable(error) || next === undefined) return false;
        meta.log.warn({ event: 'fallback', from: candidate, to: next, code: error.code }, `falling back from ${candidate} to ${next}`);
        return true;
      };
      // While the login's plan window is spent (or only extra usage is left and this key may not
      // draw on it), the CLI is not started: it would only say so again.
      const refused = deps.plans?.refusal(route.backend.id, overagePolicy(principal));
      if (refused) {
        meta.log.info({ event: 'plan_refused', backend: route.backend.id, code: refused.code }, refused.message);
        last = { ok: false, error: refused, usage: null };
        if (fallBack(refused)) continue;
        return last;
      }
      // A CLI olp already knows is logged out is not started: codex would retry for minutes.
      const known = deps.detector.known(route.backend);
      if (known?.login === 'not_logged_in') {
        last = { ok: false, error: backendNotLoggedIn(route.backend.id, "olp's last status check found no login", known.fixes[0] ?? 'log the CLI in'), usage: null };
        if (fallBack(last.error)) continue;
        return last;
      }
      // A turn with the client's functions runs without a session: it may park on the calls.
      const tools = toolsFor();
      const lease = deps.sessions && !tools ? await deps.sessions.acquire(principal.keyId, route.backend.id, transcript, signal, conversation.whole) : ephemeral(transcript, conversation.whole);
      if (signal.aborted) {
        // Gone while a slot was found: no CLI is started, and the slot's session stays as it was.
        lease.release();
        throw new ClientAbortedError();
      }
      let gen: AsyncGenerator<BackendEvent, RunOutcome> | undefined;
      try {
        p.session = toSessionNote(lease);
        const schema = outputSchemaOf(input.responseFormat);
        const turn = { system: transcript.system, cliModel: route.cliModel, ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}), ...(schema ? { outputSchema: schema } : {}) };
        const requestId = i === 0 ? meta.requestId : `${meta.requestId}-f${i}`;
        gen = runTurn(deps.turns, { keyId: principal.keyId, requestId, backend: route.backend, turn, lease, signal, log: meta.log, ...(tools ? { tools: offeredTools(tools) } : {}) });
        const outcome = yield* forward(gen, candidate, route.backend.id);
        p.session = toSessionNote(lease, outcome.sessionId);
        p.run = outcome.run;
        if (outcome.ok && !tools) observeTokens(deps, principal.keyId, route.backend.id, candidate, lease, conversation, outcome.usage);
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

  async function* run(input: ConversationInput, signal: AbortSignal): AsyncGenerator<ConversationEvent, ConversationResult> {
    model = input.model;
    currentTools = input.tools;
    currentFormat = input.responseFormat;
    /** The run was stopped: by olp with its own error (a client that does not read), or by the client leaving. */
    const noteStop = (usage: Usage | null): void => {
      const stopped = toStopOutcome(stopReasonOf(signal));
      if ('error' in stopped) p.error = stopped.error;
      else {
        p.aborted = true;
        p.usage = usage ?? p.usage;
      }
    };
    let permit: Permit | undefined;
    let claimed: ParkedPlan | undefined;
    const onAbort = () => {
      // Gone: from now on the key's budget holds what it was sent, not the whole reservation.
      permit?.reserve(p.promptTokens + charsToTokens(p.sentChars));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (rateError) throw rateError;
      const first = deps.registry.resolve(input.model);
      deps.admission.checkModel(principal, input.model);
      const messages = await fetchRemoteImages(input.messages, deps.imageLimits);
      if (signal.aborted) throw new ClientAbortedError(); // left while remote images were fetched
      // Bad content (an undecodable image, a part the CLI cannot take) is a 400 before admission;
      // one too long to send whole is refused only if it must be (see transcriptFor).
      const conversation = transcriptFor(deps, principal.keyId, messages, input.responseFormat, input.model, first.backend, toolsFor());
      // The budget holds what a re-sent conversation would cost (a continued one costs less).
      const sent = conversation.whole.ok ? conversation.whole.transcript : conversation.full;
      p.promptTokens = estimateTurnTokens(sent.turns, sent.system, conversation.rate);
      claimed = planParked(deps.parked, principal.keyId, messages);
      try {
        permit = await deps.admission.admit(principal, estimateTokens(p.promptTokens, input.maxOutputTokens), signal, rate);
      } catch (err) {
        if (err instanceof ClientAbortedError) {
          p.aborted = true; // left while queued: already out of the queue
          return finish();
        }
        Object.assign(p.headers, (err as ProxyError).headers);
        throw err;
      }
      if (signal.aborted) throw new ClientAbortedError(); // left in the tick it was admitted
      p.queueMs = permit.waitedMs;
      Object.assign(p.headers, permit.headers);
      meta.log.debug({ event: 'admitted', key: principal.name, queueMs: permit.waitedMs }, 'admitted');
      const mine = claimed;
      claimed = undefined;
      const outcome = (mine ? yield* continueParked(input, mine, signal) : undefined) ?? (yield* runChain(input, messages, conversation, signal));
      if (outcome) {
        p.usage = outcome.usage;
        if (outcome.ok) p.finishReason = outcome.finishReason;
        else p.error = outcome.error;
      }
    } catch (err) {
      // A client that went away (or was stopped for not reading) ends here too.
      if (err instanceof ClientAbortedError || signal.aborted) noteStop((err as { usage?: Usage | null }).usage ?? null);
      else {
        p.error = toProxyError(err);
        if (p.error.code === 'internal_error') meta.log.error({ err }, 'internal error');
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Refused or gone before it could continue its parked turn: the turn waits on, as it did.
      if (claimed) deps.parked?.park(claimed.turn);
      // Closed early by its consumer after the client left, or after olp stopped the reply.
      if (!result && signal.aborted && !p.error && !p.aborted) noteStop(null);
      permit?.release();
      finish();
    }
    return finish();
  }

  return {
    run,
    reject(error: unknown): ConversationResult {
      // Over its requests-per-minute, a key hears that first, whatever else is wrong.
      p.error = toProxyError(rateError ?? error);
      if (p.error.code === 'internal_error') meta.log.error({ err: error }, 'internal error');
      return finish();
    },
    get result() {
      return result;
    },
  };
}

/** olp's estimate for a client that left before the CLI reported usage: prompt and sent text. */
function estimate(promptTokens: number, sentChars: number): Usage {
  const completionTokens = charsToTokens(sentChars);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedTokens: 0, reasoningTokens: 0, raw: {} };
}
