import express, { type NextFunction, type Request, type Response } from 'express';
import { v4 as uuidv4 } from 'uuid';
import { routeNotFound } from '../errors/index.js';
import { bounded, type Logger } from '../log/index.js';
import { charsToTokens } from '../admit/index.js';
import type { Usage } from '../backends/index.js';
import { ctx, type RequestContext } from './context.js';
import { createMeRoute, createKeysRoute } from './admin.js';
import { createErrorHandler } from './errors.js';
import { createCors } from './cors.js';
import { createPathCheck } from './path-check.js';
import { createAuth, createChatRoute, createHealthRoute, createModelsRoutes, type RouteDeps } from './routes.js';

export interface AppDeps extends RouteDeps {
  logger: Logger;
  bodyLimit: number;
  /** Browser origins allowed to call olp (`*` for any); empty: no CORS headers at all. */
  corsOrigins: readonly string[];
}

/** One line per finished request: who, what, how it ended, how long, how many tokens. */
function logFinished(c: RequestContext, req: Request, res: Response): void {
  const u = c.usage;
  c.log.info(
    {
      event: 'request',
      method: req.method,
      path: bounded(req.path),
      key: c.principal?.name,
      model: bounded(c.model),
      ...(c.servedModel && c.servedModel !== c.model ? { servedModel: bounded(c.servedModel) } : {}),
      status: c.aborted ? 499 : res.statusCode,
      ...(c.error ? { code: c.error.code } : {}),
      ...(c.aborted ? { outcome: 'client_aborted' } : {}),
      durationMs: Math.round(performance.now() - c.started),
      ...(c.firstTokenMs != null ? { firstTokenMs: Math.round(c.firstTokenMs) } : {}),
      ...(c.session ? { session: c.session.mode, ...(c.session.reason ? { rotation: c.session.reason } : {}) } : {}),
      ...(u ? { tokens: { prompt: u.promptTokens, completion: u.completionTokens, cached: u.cachedTokens } } : {}),
    },
    'request finished',
  );
}

/** How a chat request ended, for its ledger row. */
function toOutcome(c: RequestContext, status: number): string {
  if (c.aborted) return 'client_aborted';
  if (!c.error && status < 400) return 'ok';
  if (c.error?.code === 'backend_timeout') return 'timeout';
  if (c.backend === undefined) return 'rejected';
  return 'error';
}

/**
 * What a request that did not finish is charged: the CLI's own usage when it reported any,
 * otherwise an estimate from the prompt and the reply text the client was sent.
 */
function toCharged(c: RequestContext): { usage: Usage | null; estimated: boolean } {
  const sent = c.charge?.sent.chars ?? 0;
  if (c.usage || !c.charge || (sent === 0 && !c.aborted)) return { usage: c.usage ?? null, estimated: false };
  if (sent === 0) return { usage: null, estimated: false };
  const promptTokens = charsToTokens(c.charge.promptChars);
  const completionTokens = charsToTokens(sent);
  return { usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedTokens: 0, reasoningTokens: 0, raw: {} }, estimated: true };
}

/** Exactly one ledger row per authenticated chat request, written after the response is out. */
function recordUsage(deps: AppDeps, c: RequestContext, res: Response): void {
  // Without a key there is nobody to bill: the request's log line is its only trace.
  if (!c.principal) return;
  const { usage: u, estimated } = toCharged(c);
  const outcome = toOutcome(c, res.statusCode);
  try {
    deps.store.usage.record({
      requestId: c.requestId,
      ts: c.startedAt,
      keyId: c.principal?.keyId ?? null,
      keyName: c.principal?.name ?? null,
      backend: c.backend ?? null,
      model: bounded(c.model ?? null),
      servedModel: bounded(c.backend ? (c.servedModel ?? c.model ?? null) : null),
      outcome,
      errorCode: c.error?.code ?? null,
      status: c.aborted ? 499 : res.statusCode,
      queueMs: c.queueMs ?? null,
      ttftMs: c.firstTokenMs != null ? Math.round(c.firstTokenMs) : null,
      durationMs: Math.round(performance.now() - c.started),
      promptTokens: u?.promptTokens ?? 0,
      completionTokens: u?.completionTokens ?? 0,
      cachedTokens: u?.cachedTokens ?? 0,
      reasoningTokens: u?.reasoningTokens ?? 0,
      rawUsage: u?.raw ?? null,
      partial: Boolean(u) && outcome !== 'ok',
      estimated,
      // Budgets count what reached the client: a finished reply, or the part of one it was sent.
      billable: outcome === 'ok' || estimated || (Boolean(u) && (c.aborted === true || (c.charge?.sent.chars ?? 0) > 0)),
      costUsd: u?.costUsd ?? null,
      sessionId: c.session?.id ?? null,
      sessionMode: c.session?.mode ?? null,
      rotationReason: c.session?.reason ?? null,
    });
  } catch (err) {
    c.log.error({ err, event: 'usage_write_failed' }, 'could not write the usage row');
  }
}

/** Builds the express app from its dependencies; holds no state of its own. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = `req_${uuidv4().replaceAll('-', '')}`;
    // The request is finished when the response has closed and every hold is released.
    let holds = 1;
    const release = () => {
      if (--holds > 0) return;
      deps.lifecycle.end();
      logFinished(c, req, res);
      if (req.method === 'POST' && req.path === '/v1/chat/completions') recordUsage(deps, c, res);
    };
    const c: RequestContext = {
      requestId,
      log: deps.logger.child({ requestId }),
      started: performance.now(),
      startedAt: Date.now(),
      hold() {
        holds++;
        let done = false;
        return () => {
          if (!done) {
            done = true;
            release();
          }
        };
      },
    };
    res.locals.ctx = c;
    res.setHeader('x-request-id', requestId);
    deps.lifecycle.begin();
    res.once('close', () => {
      // The response closed before it was complete: the client went away.
      c.aborted ||= !res.writableFinished;
      release();
    });
    next();
  });

  app.use(createPathCheck());
  if (deps.corsOrigins.length > 0) app.use(createCors(deps.corsOrigins));
  const models = createModelsRoutes(deps);
  app.get('/health', createHealthRoute(deps));
  app.use('/v1', createAuth(deps));
  app.use('/olp', createAuth(deps));
  app.get('/olp/me', createMeRoute(deps.store));
  app.get('/olp/keys', createKeysRoute(deps.store));
  app.get('/v1/models', models.list);
  app.get('/v1/models/:id', models.get);
  // Any content type is read as JSON: `curl -d` sends form encoding by default.
  app.post('/v1/chat/completions', express.json({ limit: deps.bodyLimit, type: () => true, strict: false }), createChatRoute(deps));
  app.use((req: Request) => {
    throw routeNotFound(req.method, req.path);
  });
  app.use(createErrorHandler(deps.bodyLimit));
  return app;
}

export { ctx };
