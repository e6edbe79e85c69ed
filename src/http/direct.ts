import { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Sends `POST <path>` requests (the exact path, no query string) through a fixed chain of
 * handlers without express's router; everything else goes to the app as before.
 *
 * The conversation endpoints are nearly every request olp serves, and the router's walk to them
 * (URL parsing, its layer stack, its `restore` closures, debug calls) cost about 0.17 ms of a
 * request's 2.5 ms of CPU (profiled on Node 20). The chain still gets express's request and
 * response (the same prototypes, `res.locals`, `req.app`), and handlers behave as under the router:
 * a throw or a rejected promise goes to `next(err)`, then to the error handler. A chain that
 * falls off its end with `next()` gets `notFound`, as the router would answer that path.
 *
 * Installed by replacing `app.handle`, which the app function calls for every request, so a
 * server made from the app (`http.createServer(app)`, supertest) takes the short way too. For a
 * top-level app only: mounted inside another app, it would answer these paths itself and never
 * hand them back to the parent (its `done` is not called).
 */
export function routeDirect(
  app: express.Express,
  routes: ReadonlyMap<string, readonly RequestHandler[]>,
  onError: ErrorRequestHandler,
  notFound: (req: Request) => unknown,
): void {
  const withHandle = app as unknown as {
    handle: (req: IncomingMessage, res: ServerResponse, done?: (err?: unknown) => void) => void;
  };
  const viaRouter = withHandle.handle.bind(app);
  const handle = (req: IncomingMessage, res: ServerResponse, done?: (err?: unknown) => void): void => {
    const chain = req.method === 'POST' ? routes.get(req.url ?? '') : undefined;
    if (chain === undefined) {
      viaRouter(req, res, done);
      return;
    }
    // What express's app.handle and router.handle set up before the first handler.
    const r = Object.setPrototypeOf(req, app.request) as Request;
    const s = Object.setPrototypeOf(res, app.response) as Response;
    (r as { res: Response }).res = s;
    (s as { req: Request }).req = r;
    s.locals ??= Object.create(null) as Record<string, unknown>;
    r.originalUrl ??= r.url;
    r.baseUrl = '';
    r.params = {};
    run(chain, r, s);
  };

  function run(chain: readonly RequestHandler[], req: Request, res: Response): void {
    let i = 0;
    let failed = false;
    const next: NextFunction = (err?: unknown) => {
      if (failed) return;
      // As the router reads it: any truthy value but 'route' and 'router' is an error.
      if (err && err !== 'route' && err !== 'router') {
        fail(err);
        return;
      }
      const fn = err ? undefined : chain[i++];
      if (fn === undefined) {
        fail(notFound(req));
        return;
      }
      try {
        const ret = fn(req, res, next) as unknown;
        if (ret instanceof Promise) ret.then(undefined, (e: unknown) => next(e || new Error('Rejected promise')));
      } catch (e) {
        next(e);
      }
    };
    const fail = (err: unknown): void => {
      failed = true;
      // The error handler itself failed: end the response as express's final handler would.
      const last = (e: unknown): void => {
        if (!res.headersSent && !res.destroyed) res.status(500).end();
        else res.destroy(e instanceof Error ? e : undefined);
      };
      try {
        const ret = onError(err, req, res, () => undefined) as unknown;
        if (ret instanceof Promise) ret.then(undefined, last);
      } catch (e) {
        last(e);
      }
    };
    next();
  }

  withHandle.handle = handle;
}

/**
 * Classes for the HTTP server that make each request and response with express's prototypes
 * from the start (`createServer({ IncomingMessage, ServerResponse })`). Express (and `routeDirect`)
 * otherwise re-parents Node's objects with `Object.setPrototypeOf` on every request, which gives
 * each a new hidden class: V8's inline caches in Node's HTTP code and in express then see two
 * shapes of every object and fall back to slow lookups. Setting a prototype an object already
 * has changes nothing, so express's own `setPrototypeOf` calls stay harmless.
 */
export function expressMessages(app: express.Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  // Node's constructors are plain functions, called here on the new object (Node 20 and 24).
  const initRequest = IncomingMessage as unknown as (this: unknown, socket: unknown) => void;
  const initResponse = ServerResponse as unknown as (this: unknown, req: unknown, options: unknown) => void;
  function Request(this: unknown, socket: unknown): void {
    initRequest.call(this, socket);
  }
  function Response(this: unknown, req: unknown, options: unknown): void {
    initResponse.call(this, req, options);
  }
  // app.request and app.response inherit from Node's own prototypes.
  Request.prototype = app.request;
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}
