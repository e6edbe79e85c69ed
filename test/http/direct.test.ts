// The conversation routes' short way past express's router: the same request and response
// objects, and the same error handling, as the router gives.
import assert from 'node:assert/strict';
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import request from 'supertest';
import { describe, it } from 'node:test';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expressMessages, routeDirect } from '../../src/http/direct.js';

function appWith(chain: RequestHandler[], seen: string[] = []) {
  const app = express();
  app.set('json spaces', 1);
  const mark: RequestHandler = (req, _res, next) => {
    seen.push(`router ${req.method} ${req.url}`);
    next();
  };
  app.use(mark);
  app.post('/fast', ...chain);
  const notFound = (req: Request) => Object.assign(new Error(`no route ${req.method} ${req.path}`), { status: 404 });
  app.use((req: Request) => {
    throw notFound(req);
  });
  const onError: ErrorRequestHandler = (err: { status?: number; message: string }, _req, res, _next) => {
    seen.push(`error ${err.message}`);
    res.status(err.status ?? 500).json({ error: err.message });
  };
  app.use(onError);
  routeDirect(app, new Map([['/fast', chain]]), onError, notFound);
  return app;
}

describe('routeDirect', () => {
  it('answers the exact path without the router, with express request and response', async () => {
    const seen: string[] = [];
    const app = appWith(
      [
        (_req, res, next) => {
          res.locals.n = 1;
          next();
        },
        (req, res) => {
          assert.equal(req.app, app);
          assert.equal(req.res, res);
          assert.equal(req.originalUrl, '/fast');
          assert.equal(req.path, '/fast');
          assert.equal(req.get('x-probe'), 'yes');
          res.status(201).json({ n: res.locals.n as number });
        },
      ],
      seen,
    );
    const res = await request(app).post('/fast').set('x-probe', 'yes').send({});
    assert.equal(res.status, 201);
    assert.equal(res.text, '{\n "n": 1\n}', 'app settings (json spaces) apply');
    assert.deepEqual(seen, []);
  });

  it('leaves other methods, paths and query strings to the router', async () => {
    const seen: string[] = [];
    const app = appWith([(_req, res) => void res.json({ ok: true })], seen);
    assert.equal((await request(app).post('/fast?x=1')).status, 200);
    assert.equal((await request(app).get('/fast')).status, 404);
    assert.equal((await request(app).post('/other')).status, 404);
    assert.deepEqual(
      seen.filter((s) => s.startsWith('router')),
      ['router POST /fast?x=1', 'router GET /fast', 'router POST /other'],
    );
  });

  it('sends a throw, a rejected promise and next(err) to the error handler, once', async () => {
    for (const fail of [
      () => {
        throw Object.assign(new Error('thrown'), { status: 400 });
      },
      async () => {
        await Promise.resolve();
        throw Object.assign(new Error('rejected'), { status: 400 });
      },
    ] as RequestHandler[]) {
      const seen: string[] = [];
      const app = appWith([fail, (_req, res) => void res.json({ reached: true })], seen);
      const res = await request(app).post('/fast');
      assert.equal(res.status, 400);
      assert.equal(seen.length, 1, seen.join());
    }
    const seen: string[] = [];
    const app = appWith([(_req, _res, next) => next(Object.assign(new Error('passed'), { status: 409 }))], seen);
    const res = await request(app).post('/fast');
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { error: 'passed' });
    assert.deepEqual(seen, ['error passed']);
  });

  it('answers as the router would when the chain falls off its end', async () => {
    const app = appWith([(_req, _res, next) => next()]);
    const res = await request(app).post('/fast');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'no route POST /fast' });
  });

  it('reads next() as the router does: falsy is no error, a falsy rejection is one', async () => {
    const seen: string[] = [];
    const app = appWith([(_req, _res, next) => next(false as unknown as Error), async () => Promise.reject(0)], seen);
    const res = await request(app).post('/fast');
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { error: 'Rejected promise' });
  });

  it('ends the response with a 500 when the error handler itself fails', async () => {
    const app = express();
    const chain: RequestHandler[] = [
      () => {
        throw new Error('first');
      },
    ];
    const broken: ErrorRequestHandler = () => {
      throw new Error('handler broke');
    };
    routeDirect(app, new Map([['/fast', chain]]), broken, () => new Error('none'));
    assert.equal((await request(app).post('/fast')).status, 500);
    const rejecting: ErrorRequestHandler = async () => {
      await Promise.resolve();
      throw new Error('async handler broke');
    };
    const other = express();
    routeDirect(other, new Map([['/fast', chain]]), rejecting, () => new Error('none'));
    assert.equal((await request(other).post('/fast')).status, 500);
  });

  it('expressMessages: a server makes requests and responses with express prototypes from the start', async () => {
    const seen: string[] = [];
    const app = appWith(
      [
        (req, res) =>
          res.json({
            ip: req.ip,
            query: req.query,
            n: res.locals.n ?? null,
            isReq: req instanceof IncomingMessage,
            isRes: res instanceof ServerResponse,
          }),
      ],
      seen,
    );
    const born: boolean[] = [];
    const server = createServer({ ...expressMessages(app) }, (req, res) => {
      born.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const fast = await fetch(`${base}/fast`, { method: 'POST' });
      assert.deepEqual(await fast.json(), { ip: '127.0.0.1', query: {}, n: null, isReq: true, isRes: true });
      // With a query string the request takes the router (the same handler).
      const routed = await fetch(`${base}/fast?a=1`, { method: 'POST' });
      assert.deepEqual(await routed.json(), { ip: '127.0.0.1', query: { a: '1' }, n: null, isReq: true, isRes: true });
      assert.equal((await fetch(`${base}/nowhere`, { method: 'POST' })).status, 404);
      assert.deepEqual(born, [true, true, true], 'made with the prototypes, before express saw them');
      assert.deepEqual(seen, ['router POST /fast?a=1', 'router POST /nowhere', 'error no route POST /nowhere']);
    } finally {
      server.close();
    }
  });
});
