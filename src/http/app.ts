import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ownerOnly, routeNotFound } from '../errors/index.js';
import { randomText } from '../ids/index.js';
import { bounded, type Logger } from '../log/index.js';
import type { Plans } from '../plan/index.js';
import { ctx, type RequestContext } from './context.js';
import { pageRoute } from '../page/index.js';
import { createKeysRoute, createMeRoute, createMyUsageRoute, createUsageRoute } from './admin.js';
import { createErrorHandler } from './errors.js';
import { createAdminActionsRoute, createKeyAdminRoutes } from './keys-admin.js';
import { createUsageExportRoute } from './usage-export.js';
import { addMyLoginRoutes, type MemberLoginsDeps } from './my-login.js';
import { createJsonBody } from './body.js';
import { createCors } from './cors.js';
import { createPathCheck } from './path-check.js';
import { routeDirect } from './direct.js';
import type { EndpointDeps } from './conversation-route.js';
import type { SessionNote } from '../conversation/index.js';
import { createStoredResponseRoutes } from './stored-responses.js';
import {
  createChatRoute,
  createCountTokensRoute,
  createMessagesRoute,
  createResponsesRoute,
  type MessagesDeps,
} from './wire-routes.js';
import { checkMessagesHeaders } from './messages-headers.js';
import { createAuth, createHealthRoute, createModelsRoutes, type RouteDeps } from './routes.js';

export interface AppDeps extends RouteDeps, EndpointDeps, Omit<MessagesDeps, keyof EndpointDeps | 'admission'> {
  /** GET /metrics, when served: `owner` behind an owner key, `open` without one. */
  metrics?: { mode: 'owner' | 'open'; render(): Promise<{ type: string; body: string }> } | undefined;
  /** The logins' plan states, for a key's own page. */
  plans?: Plans | undefined;
  /** /olp/me/login: keys connect their own CLI logins (absent: not served). */
  memberLogins?: MemberLoginsDeps | undefined;
  logger: Logger;
  bodyLimit: number;
  /** Browser origins allowed to call olp (`*` for any); empty: no CORS headers at all. */
  corsOrigins: readonly string[];
}

/** One line per finished request: who, what, how it ended, how long, how many tokens. */
function logFinished(c: RequestContext, req: Request, res: Response): void {
  const r = c.conversation?.result;
  const u = r?.usage;
  const error = r?.error ?? c.error;
  const aborted = r ? r.outcome === 'client_aborted' : c.aborted;
  c.log.info(
    {
      event: 'request',
      method: req.method,
      path: bounded(req.path),
      key: c.principal?.name,
      ...(r?.model ? { model: bounded(r.model) } : {}),
      ...(r?.servedModel && r.servedModel !== r.model ? { servedModel: bounded(r.servedModel) } : {}),
      status: aborted ? 499 : (r?.status ?? res.statusCode),
      ...(error ? { code: error.code } : {}),
      ...(aborted ? { outcome: 'client_aborted' } : {}),
      durationMs: Math.round(performance.now() - c.started),
      ...(r?.firstTokenMs != null ? { firstTokenMs: Math.round(r.firstTokenMs) } : {}),
      ...(r?.session ? sessionFields(r.session) : {}),
      ...(r?.run ? { run: r.run } : {}),
      ...(u ? { tokens: { prompt: u.promptTokens, completion: u.completionTokens, cached: u.cachedTokens } } : {}),
    },
    'request finished',
  );
}

/**
 * A request's session in its log line: the mode, why the slot was rotated, and where a new
 * conversation parted from the closest one.
 */
function sessionFields(n: SessionNote): Record<string, string> {
  return {
    session: n.mode,
    ...(n.reason ? { rotation: n.reason } : {}),
    ...(n.diverged ? { divergedAt: `turns[${n.diverged.at}]`, diverged: n.diverged.why } : {}),
  };
}

/** An incoming `x-request-id` olp logs beside its own: printable, short, no spaces or quotes. */
const FORWARDED_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** `req_` and 32 random hex digits, as OpenAI's request ids. */
export function newRequestId(): string {
  return `req_${randomText(16, 'hex')}`;
}

/** Builds the express app from its dependencies; holds no state of its own. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const context = createContext(deps);
  app.use(context);
  app.use(createPathCheck());
  const cors = deps.corsOrigins.length > 0 ? [createCors(deps.corsOrigins)] : [];
  if (cors.length > 0) app.use(cors);
  // The conversation endpoints first: express tries its routes in order, and these are nearly
  // every request olp serves. Each authenticates itself, as `/v1` below does for the others.
  const auth = createAuth(deps);
  const json = createJsonBody(deps.bodyLimit);
  const conversations = new Map<string, RequestHandler[]>([
    ['/v1/chat/completions', [auth, json, createChatRoute(deps)]],
    ['/v1/responses', [auth, json, createResponsesRoute(deps)]],
    ['/v1/messages', [auth, checkMessagesHeaders, json, createMessagesRoute(deps)]],
    ['/v1/messages/count_tokens', [auth, checkMessagesHeaders, json, createCountTokensRoute(deps)]],
  ]);
  for (const [path, handlers] of conversations) app.post(path, ...handlers);
  addOpenRoutes(app, deps, auth);
  addKeyedRoutes(app, deps, auth, json);
  const notFound = (req: Request) => routeNotFound(req.method, req.path);
  app.use((req: Request) => {
    throw notFound(req);
  });
  const onError = createErrorHandler(deps.bodyLimit);
  app.use(onError);
  // The same conversation chains, without the router's walk, for their exact paths (a plain
  // path needs no percent-decoding check); a query string or any other request takes the router.
  routeDirect(
    app,
    new Map([...conversations].map(([path, handlers]) => [path, [context, ...cors, ...handlers]])),
    onError,
    notFound,
  );
  return app;
}

/**
 * Each request's context (its id, logger and times) and its place in the server's in-flight
 * count: the request is finished when its response has closed and every hold is released.
 */
function createContext(deps: AppDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = newRequestId();
    // The id a front door (or the client) gave the request, so its logs and olp's can be matched.
    const given = req.headers['x-request-id'];
    const forwarded = typeof given === 'string' && FORWARDED_ID.test(given) ? { forwardedId: given } : {};
    let holds = 1;
    const release = () => {
      if (--holds > 0) return;
      deps.lifecycle.end();
      logFinished(c, req, res);
    };
    const c: RequestContext = {
      requestId,
      log: deps.logger.child({ requestId, ...forwarded }),
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
  };
}

/** The routes anyone may ask (health, the root, the page's files, metrics when open). */
function addOpenRoutes(app: express.Express, deps: AppDeps, auth: RequestHandler): void {
  app.get('/health', createHealthRoute(deps));
  // Claude Code probes the base URL (HEAD /) before it starts; express answers HEAD from GET.
  app.get('/', rootRoute);
  if (deps.metrics?.mode === 'open') app.get('/metrics', metricsRoute(deps.metrics));
  if (deps.metrics?.mode === 'owner') app.get('/metrics', auth, ownerOnlyRoute, metricsRoute(deps.metrics));
  // The usage page itself holds no data: it asks for a key and fetches the JSON below with it.
  app.get(['/olp', '/olp/'], pageRoute('html'));
  app.get('/olp/app.js', pageRoute('js'));
  app.get('/olp/app.css', pageRoute('css'));
}

/** The routes behind a key: usage, keys (owners change them), models and stored responses. */
function addKeyedRoutes(app: express.Express, deps: AppDeps, auth: RequestHandler, json: RequestHandler): void {
  const models = createModelsRoutes(deps);
  app.use('/v1', auth);
  app.use('/olp', auth, noStore);
  app.get('/olp/me', createMeRoute(deps.store, deps.plans));
  app.get('/olp/me/usage', createMyUsageRoute(deps.store, deps.plans));
  addMyLoginRoutes(app, deps.memberLogins, deps.plans, json);
  app.get('/olp/usage', createUsageRoute(deps.store, deps.plans));
  app.get('/olp/usage/export', createUsageExportRoute(deps.store));
  app.get('/olp/keys', createKeysRoute(deps.store));
  // The owner's changes to keys: the role is checked before the body is read.
  const keyAdmin = createKeyAdminRoutes(deps.store);
  app.post('/olp/keys', ownerOnlyRoute, json, keyAdmin.create);
  app.patch('/olp/keys/:name', ownerOnlyRoute, json, keyAdmin.update);
  app.post('/olp/keys/:name/rotate', ownerOnlyRoute, keyAdmin.rotate);
  app.delete('/olp/keys/:name', ownerOnlyRoute, keyAdmin.revoke);
  app.get('/olp/admin-actions', ownerOnlyRoute, createAdminActionsRoute(deps.store));
  app.get('/v1/models', models.list);
  app.get('/v1/models/:id', models.get);
  const stored = createStoredResponseRoutes(deps.store);
  app.get('/v1/responses/:id', stored.get);
  app.delete('/v1/responses/:id', stored.remove);
  app.get('/v1/responses/:id/input_items', stored.inputItems);
}

/** GET /metrics: the Prometheus exposition, never cached. */
function metricsRoute(m: NonNullable<AppDeps['metrics']>) {
  return async (_req: Request, res: Response): Promise<void> => {
    const { type, body } = await m.render();
    res.setHeader('content-type', type);
    res.setHeader('cache-control', 'no-store');
    res.end(body);
  };
}

/** GET / (and HEAD /): olp is up; no key needed, nothing said beyond that. */
function rootRoute(_req: Request, res: Response): void {
  res.type('text/plain').send('olp is running\n');
}

/** Authenticated JSON about keys and usage is never kept by a browser or a proxy. */
function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('cache-control', 'no-store');
  next();
}

function ownerOnlyRoute(_req: Request, res: Response, next: NextFunction): void {
  if (ctx(res).principal?.role !== 'owner') throw ownerOnly();
  next();
}

export { ctx };
