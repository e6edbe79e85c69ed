import type { Request, Response } from 'express';
import { charsToTokens, estimateTokens, modelAllowed, type Admission, type Permit } from '../admit/index.js';
import { authenticate } from '../auth/index.js';
import type { Backend, BackendEvent, Detector, TurnOutcome, Usage } from '../backends/index.js';
import { backendNotLoggedIn, clientReadTimeout, shuttingDown, toErrorBody, type ProxyError } from '../errors/index.js';
import type { ModelRegistry } from '../models/index.js';
import { ClientTooSlowError, newCompletionId, respondJson, respondStream, type FailedTurnError, type StreamMeta } from '../respond/index.js';
import type { Store } from '../store/index.js';
import { ephemeral, type Lease, type SessionPool } from '../sessions/index.js';
import { fetchRemoteImages, fitContext, policyFor, toTranscript, withResponseFormat, type ImageLimits, type Transcript } from '../transcript/index.js';
import { isClientAbort, type TurnDeps } from '../turn/index.js';
import { runLeasedTurn } from '../turn/leased.js';
import { parseChatRequest, type ChatRequest } from '../validate/index.js';
import { ctx } from './context.js';
import type { Lifecycle } from './lifecycle.js';

export interface RouteDeps {
  store: Store;
  registry: ModelRegistry;
  backends: readonly Backend[];
  turns: TurnDeps;
  lifecycle: Lifecycle;
  admission: Admission;
  /** Absent when sessions are off: every request then runs ephemeral. */
  sessions: SessionPool | undefined;
  fallbacks: Readonly<Record<string, readonly string[]>>;
  detector: Detector;
  imageLimits: ImageLimits;
  /** Prompt budget per model id or backend id. */
  contextTokens: Readonly<Record<string, number>>;
  contextOverflow: 'refuse' | 'trim';
  /** How long a client may leave a streamed reply unread. */
  clientTimeoutMs: number;
}

/** The request's conversation as one backend needs it, within the model's prompt budget. */
function transcriptFor(deps: RouteDeps, request: ChatRequest, model: string, backend: Backend): Transcript {
  const parsed = toTranscript(request.messages, policyFor(backend.id, deps.imageLimits));
  const system = withResponseFormat({ system: parsed.system, text: '' }, request.response_format).system;
  const limit = deps.contextTokens[model] ?? deps.contextTokens[backend.id] ?? 200_000;
  return fitContext({ system, turns: parsed.turns }, limit, deps.contextOverflow);
}

/** Bearer auth for everything under /v1; puts the principal in the request context. */
export function createAuth(deps: RouteDeps) {
  return (req: Request, res: Response, next: () => void): void => {
    ctx(res).principal = authenticate(req.headers.authorization, deps.store.keys);
    next();
  };
}

export function createModelsRoutes(deps: RouteDeps) {
  return {
    list(_req: Request, res: Response): void {
      res.json({ object: 'list', data: deps.registry.list() });
    },
    get(req: Request, res: Response): void {
      res.json(deps.registry.get(String(req.params.id)));
    },
  };
}

/**
 * GET /health: without a key (or with a member's) only whether olp is up and ready; an owner's key
 * also gets each backend's CLI (path, version, login) and the load. A key that is sent must be valid.
 */
export function createHealthRoute(deps: RouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = req.headers.authorization === undefined ? undefined : authenticate(req.headers.authorization, deps.store.keys);
    const found = await Promise.all(deps.backends.map((b) => deps.detector.detect(b)));
    const ok = found.some((d) => d.ready);
    const status = deps.lifecycle.draining ? 'draining' : ok ? 'ok' : 'degraded';
    res.status(deps.lifecycle.draining ? 503 : 200);
    if (principal?.role !== 'owner') {
      res.json({ status });
      return;
    }
    res.json({
      status,
      backends: Object.fromEntries(found.map((d) => [d.backend, { found: d.path !== null, path: d.path, version: d.version, login: d.login, ready: d.ready }])),
      inflight: deps.lifecycle.inflight,
      cli: deps.admission.stats(),
    });
  };
}

/** POST /v1/chat/completions */
export function createChatRoute(deps: RouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.lifecycle.draining) throw shuttingDown();
    const c = ctx(res);
    const done = c.hold();
    try {
      await chat(deps, req, res);
    } finally {
      done();
    }
  };
}

/** Failures that another model in the fallback chain may avoid (before any output only). */
function isFallbackable(e: ProxyError): boolean {
  return e.code === 'backend_not_installed' || e.code === 'backend_not_logged_in' || e.code === 'backend_overloaded' || e.code === 'backend_rate_limited';
}

/** Validates, routes and admits the request, then runs it through its fallback chain; the permit is released here. */
async function chat(deps: RouteDeps, req: Request, res: Response): Promise<void> {
  const c = ctx(res);
  const principal = c.principal!;
  // Counted before validation: a key's bad requests use its requests-per-minute too.
  const rate = deps.admission.countRequest(principal);
  const request = parseChatRequest(req.body);
  c.model = request.model;
  const first = deps.registry.resolve(request.model);
  deps.admission.checkModel(principal, request.model);
  request.messages = await fetchRemoteImages(request.messages, deps.imageLimits);
  // Bad content (an undecodable image, a part the CLI cannot take, too long) is a 400 before admission.
  const transcript = transcriptFor(deps, request, request.model, first.backend);
  const system = transcript.system;
  const maxOutputTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;

  const chars = (system?.length ?? 0) + transcript.turns.reduce((n, t) => n + t.text.length, 0);
  const sent = { chars: 0 };
  c.charge = { promptChars: chars, sent };
  const disconnect = new AbortController();
  let permit: Permit | undefined;
  res.on('close', () => {
    if (res.writableFinished) return;
    // Gone: from now on the key's budget holds what it was sent, not the whole reservation.
    permit?.reserve(charsToTokens(chars) + charsToTokens(sent.chars));
    disconnect.abort('client_disconnect');
  });
  try {
    permit = await deps.admission.admit(principal, estimateTokens(chars, maxOutputTokens), disconnect.signal, rate);
  } catch (err) {
    if (!isClientAbort(err)) throw err;
    c.aborted = true; // left while queued: already out of the queue
    return;
  }
  try {
    c.queueMs = permit.waitedMs;
    c.log.debug({ event: 'admitted', key: principal.name, queueMs: permit.waitedMs }, 'admitted');
    for (const [name, value] of Object.entries(permit.headers)) res.setHeader(name, value);
    // Fallbacks the key's policy does not allow are skipped, never used to get around it.
    const chain = [request.model, ...(deps.fallbacks[request.model] ?? []).filter((m) => !principal.policy.models || modelAllowed(principal.policy.models, m))];
    const meta: StreamMeta = {
      id: newCompletionId(),
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      includeUsage: request.stream_options?.include_usage === true,
      onHead: () => undefined,
      clientTimeoutMs: deps.clientTimeoutMs,
      sent,
    };
    const events = runChain(deps, res, request, chain, transcript, maxOutputTokens, meta, disconnect.signal);
    await respond(res, request, events, meta, disconnect.signal);
  } finally {
    permit?.release();
  }
}

/**
 * Tries each model of the chain in turn: a failure that another backend may avoid, before any
 * output, moves on to the next model; anything else (or any output) settles it. Each attempt
 * holds its own session lease, released before the next one.
 */
async function* runChain(
  deps: RouteDeps,
  res: Response,
  request: ChatRequest,
  chain: readonly string[],
  firstTranscript: Transcript,
  maxOutputTokens: number | undefined,
  meta: StreamMeta,
  signal: AbortSignal,
): AsyncGenerator<BackendEvent, TurnOutcome> {
  const c = ctx(res);
  const principal = c.principal!;
  let last: TurnOutcome | undefined;
  for (const [i, model] of chain.entries()) {
    let route;
    try {
      route = deps.registry.resolve(model);
    } catch (err) {
      if (i === 0) throw err;
      c.log.warn({ event: 'fallback_skipped', model }, 'fallback model is not served here');
      continue;
    }
    let transcript = firstTranscript;
    if (i > 0) {
      try {
        transcript = transcriptFor(deps, request, model, route.backend);
      } catch (err) {
        c.log.warn({ event: 'fallback_skipped', model, err: (err as Error).message }, 'the conversation does not fit the fallback model');
        continue;
      }
    }
    // A CLI olp already knows is logged out is not started: codex would retry for minutes.
    const known = deps.detector.known(route.backend);
    if (known?.login === 'not_logged_in') {
      last = { ok: false, error: backendNotLoggedIn(route.backend.id, "olp's last status check found no login", known.fixes[0] ?? 'log the CLI in'), usage: null };
      c.backend = route.backend.id;
      c.servedModel = model;
      meta.model = model;
      if (i < chain.length - 1) {
        c.log.warn({ event: 'fallback', from: model, to: chain[i + 1], code: last.error.code }, `falling back from ${model} to ${chain[i + 1]}`);
        continue;
      }
      return last;
    }
    const lease = deps.sessions ? await deps.sessions.acquire(principal.keyId, route.backend.id, transcript, signal) : ephemeral(transcript);
    let gen: AsyncGenerator<BackendEvent, TurnOutcome> | undefined;
    try {
      c.backend = route.backend.id;
      c.servedModel = model;
      meta.model = model;
      meta.onHead = () => noteSession(res, lease);
      const turn = { prompt: { system: transcript.system, text: '' }, cliModel: route.cliModel, ...(maxOutputTokens ? { maxOutputTokens } : {}) };
      const requestId = i === 0 ? c.requestId : `${c.requestId}-f${i}`;
      gen = runLeasedTurn(deps.turns, { keyId: principal.keyId, requestId, backend: route.backend, turn, lease, signal, log: c.log });
      let emitted = false;
      let step = await gen.next();
      while (!step.done) {
        emitted ||= step.value.type === 'text';
        yield step.value;
        step = await gen.next();
      }
      const outcome = step.value;
      noteSession(res, lease, outcome.sessionId);
      if (!outcome.ok && !emitted && isFallbackable(outcome.error) && i < chain.length - 1) {
        c.log.warn({ event: 'fallback', from: model, to: chain[i + 1], code: outcome.error.code }, `falling back from ${model} to ${chain[i + 1]}`);
        last = outcome;
        continue;
      }
      return outcome;
    } finally {
      if (gen) await gen.return(undefined as never);
      lease.release();
    }
  }
  return last!;
}

/** Records the session plan (and the CLI's own session id, once known) for the log line, ledger row and header. */
function noteSession(res: Response, lease: Lease, nativeId?: string): void {
  const p = lease.plan;
  const id = nativeId ?? p.sessionId;
  ctx(res).session = { mode: p.mode, ...(id ? { id } : {}), ...(p.reason ? { reason: p.reason } : {}) };
  if (!res.headersSent) res.setHeader('x-olp-session-mode', p.mode);
}

/** Writes the response from the events; the turn is closed (child gone, workspace removed) on every path. */
async function respond(res: Response, request: ChatRequest, events: AsyncGenerator<BackendEvent, TurnOutcome>, meta: StreamMeta, signal: AbortSignal): Promise<void> {
  const c = ctx(res);
  try {
    const delivered = request.stream ? await respondStream(res, events, meta) : await respondJson(res, events, meta);
    c.usage = delivered.outcome.usage;
    c.firstTokenMs = delivered.firstTokenMs;
    if (!delivered.outcome.ok) c.error = delivered.outcome.error;
  } catch (err) {
    if (err instanceof ClientTooSlowError) {
      c.error = clientReadTimeout(err.seconds);
      c.log.warn({ event: 'client_read_timeout', seconds: err.seconds }, 'the client stopped reading; ending its stream');
      // What fits still reaches the client; a socket that stays full is closed soon after.
      if (!res.writableEnded) res.end(`data: ${JSON.stringify(toErrorBody(c.error))}\n\n`);
      setTimeout(() => res.destroy(), 5000).unref();
      return;
    }
    if (isClientAbort(err) || signal.aborted) {
      c.aborted = true;
      c.usage = ((err as { usage?: Usage | null }).usage as Usage | null | undefined) ?? null;
      return;
    }
    c.usage = (err as FailedTurnError).outcome?.usage ?? null;
    throw err;
  } finally {
    // If responding failed half-way, this closes the turn: the child is killed, the workspace removed.
    await events.return(undefined as never);
  }
}
