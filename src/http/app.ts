import express, { type NextFunction, type Request, type Response } from 'express';
import { v4 as uuidv4 } from 'uuid';
import { routeNotFound } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { ctx, type RequestContext } from './context.js';
import { createErrorHandler } from './errors.js';
import { createAuth, createChatRoute, createHealthRoute, createModelsRoutes, type RouteDeps } from './routes.js';

export interface AppDeps extends RouteDeps {
  logger: Logger;
  bodyLimit: number;
}

/** One line per finished request: who, what, how it ended, how long, how many tokens. */
function logFinished(c: RequestContext, req: Request, res: Response): void {
  const u = c.usage;
  // The response closed before it was complete: the client went away.
  c.aborted ||= !res.writableFinished;
  c.log.info(
    {
      event: 'request',
      method: req.method,
      path: req.path,
      key: c.principal?.name,
      model: c.model,
      status: c.aborted ? 499 : res.statusCode,
      ...(c.error ? { code: c.error.code } : {}),
      ...(c.aborted ? { outcome: 'client_aborted' } : {}),
      durationMs: Math.round(performance.now() - c.started),
      ...(c.firstTokenMs != null ? { firstTokenMs: Math.round(c.firstTokenMs) } : {}),
      ...(u ? { tokens: { prompt: u.promptTokens, completion: u.completionTokens, cached: u.cachedTokens } } : {}),
    },
    'request finished',
  );
}

/** Builds the express app from its dependencies; holds no state of its own. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = `req_${uuidv4().replaceAll('-', '')}`;
    const c: RequestContext = { requestId, log: deps.logger.child({ requestId }), started: performance.now() };
    res.locals.ctx = c;
    res.setHeader('x-request-id', requestId);
    deps.lifecycle.begin();
    let done = false;
    res.on('close', () => {
      if (done) return;
      done = true;
      deps.lifecycle.end();
      logFinished(c, req, res);
    });
    next();
  });

  const models = createModelsRoutes(deps);
  app.get('/health', createHealthRoute(deps));
  app.use('/v1', createAuth(deps));
  app.get('/v1/models', models.list);
  app.get('/v1/models/:id', models.get);
  // Any content type is read as JSON: `curl -d` sends form encoding by default.
  app.post('/v1/chat/completions', express.json({ limit: deps.bodyLimit, type: () => true, strict: false }), createChatRoute(deps));
  app.use((req: Request, res: Response) => {
    throw routeNotFound(req.method, req.path);
  });
  app.use(createErrorHandler(deps.bodyLimit));
  return app;
}

export { ctx };
