import type { Request, Response } from 'express';
import { estimateTokens, type Admission, type Permit } from '../admit/index.js';
import { authenticate } from '../auth/index.js';
import { findExecutable, type Backend, type Turn } from '../backends/index.js';
import { shuttingDown } from '../errors/index.js';
import type { ModelRegistry } from '../models/index.js';
import { newCompletionId, respondJson, respondStream, type FailedTurnError } from '../respond/index.js';
import type { Store } from '../store/index.js';
import { ephemeral, type Lease, type SessionPool } from '../sessions/index.js';
import { toTranscript, withResponseFormat, type Transcript } from '../transcript/index.js';
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

/** GET /health: no auth; says whether each backend's CLI is found. */
export function createHealthRoute(deps: RouteDeps) {
  return (_req: Request, res: Response): void => {
    const backends = Object.fromEntries(
      deps.backends.map((b) => {
        const path = findExecutable(b.bin, deps.turns.hostEnv.PATH);
        return [b.id, { found: path !== undefined, path: path ?? null }];
      }),
    );
    const ok = Object.values(backends).some((b) => b.found);
    res.status(deps.lifecycle.draining ? 503 : 200).json({
      status: deps.lifecycle.draining ? 'draining' : ok ? 'ok' : 'degraded',
      backends,
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

/** Validates, routes, admits, leases a session slot, then runs the turn; permit and lease are released here. */
async function chat(deps: RouteDeps, req: Request, res: Response): Promise<void> {
  const c = ctx(res);
  const principal = c.principal!;
  const request = parseChatRequest(req.body);
  c.model = request.model;
  const route = deps.registry.resolve(request.model);
  deps.admission.checkModel(principal, request.model);
  const parsed = toTranscript(request.messages);
  const system = withResponseFormat({ system: parsed.system, text: '' }, request.response_format).system;
  const transcript: Transcript = { system, turns: parsed.turns };
  const maxOutputTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;

  const disconnect = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) disconnect.abort('client_disconnect');
  });
  const chars = (system?.length ?? 0) + transcript.turns.reduce((n, t) => n + t.text.length, 0);
  let permit: Permit;
  try {
    permit = await deps.admission.admit(principal, estimateTokens(chars, maxOutputTokens), disconnect.signal);
  } catch (err) {
    if (!isClientAbort(err)) throw err;
    c.aborted = true; // left while queued: already out of the queue
    return;
  }
  try {
    c.queueMs = permit.waitedMs;
    c.log.debug({ event: 'admitted', key: principal.name, queueMs: permit.waitedMs }, 'admitted');
    for (const [name, value] of Object.entries(permit.headers)) res.setHeader(name, value);
    let lease: Lease;
    try {
      lease = deps.sessions ? await deps.sessions.acquire(principal.keyId, route.backend.id, transcript, disconnect.signal) : ephemeral(transcript);
    } catch (err) {
      if (!isClientAbort(err)) throw err;
      c.aborted = true;
      return;
    }
    try {
      c.backend = route.backend.id;
      const turn = { prompt: { system, text: '' }, cliModel: route.cliModel, ...(maxOutputTokens ? { maxOutputTokens } : {}) };
      await runAndRespond(deps, res, request, route.backend, turn, lease, disconnect.signal);
    } finally {
      lease.release();
    }
  } finally {
    permit.release();
  }
}

/** Runs the turn and writes the response; the turn is closed (child gone, workspace removed) on every path. */
async function runAndRespond(deps: RouteDeps, res: Response, request: ChatRequest, backend: Backend, turn: Omit<Turn, 'session'>, lease: Lease, signal: AbortSignal): Promise<void> {
  const c = ctx(res);
  const events = runLeasedTurn(deps.turns, { keyId: c.principal!.keyId, requestId: c.requestId, backend, turn, lease, signal, log: c.log });
  const noteSession = () => {
    const p = lease.plan;
    c.session = { mode: p.mode, ...(p.sessionId ? { id: p.sessionId } : {}), ...(p.reason ? { reason: p.reason } : {}) };
    if (!res.headersSent) res.setHeader('x-olp-session-mode', p.mode);
  };
  const meta = { id: newCompletionId(), created: Math.floor(Date.now() / 1000), model: request.model, onHead: noteSession };
  try {
    const delivered = request.stream
      ? await respondStream(res, events, { ...meta, includeUsage: request.stream_options?.include_usage === true })
      : await respondJson(res, events, meta);
    c.usage = delivered.outcome.usage;
    c.firstTokenMs = delivered.firstTokenMs;
    if (!delivered.outcome.ok) c.error = delivered.outcome.error;
  } catch (err) {
    if (isClientAbort(err) || signal.aborted) {
      c.aborted = true;
      return;
    }
    c.usage = (err as FailedTurnError).outcome?.usage ?? null;
    throw err;
  } finally {
    // If responding failed half-way, this closes the turn: the child is killed, the workspace removed.
    await events.return(undefined as never);
    if (!c.session) noteSession();
  }
}
