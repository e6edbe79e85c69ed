// The POST routes' JSON body reader: a plain body is read by olp itself, anything else by
// express.json; both answer every body alike (the same value, or an error of the same type).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { describe, it } from 'node:test';
import { createJsonBody } from '../../src/http/body.js';

const LIMIT = 100;

function appWith(parser: RequestHandler, seen: unknown[] = []) {
  const app = express();
  app.post('/', parser, (req, res) => {
    res.json({ body: req.body as unknown });
  });
  const onError: ErrorRequestHandler = (err: { status?: number; type?: string }, _req, res, _next) => {
    seen.push(err);
    res.status(err.status ?? 500).json({ error: err.type ?? 'untyped' });
  };
  app.use(onError);
  return app;
}

const ours = appWith(createJsonBody(LIMIT));
const reference = appWith(express.json({ limit: LIMIT, type: () => true, strict: false }));

interface Case {
  name: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

const cases: Case[] = [
  { name: 'a JSON object', body: '{"model":"sonnet","messages":[]}', headers: { 'content-type': 'application/json' } },
  {
    name: 'UTF-8 text, charset stated',
    body: '{"text":"héllo ☃"}',
    headers: { 'content-type': 'application/json; charset=UTF-8' },
  },
  { name: 'an empty body', body: '', headers: { 'content-type': 'application/json' } },
  { name: 'a JSON string (not strict)', body: '"x"', headers: { 'content-type': 'application/json' } },
  { name: 'malformed JSON', body: '{"model":', headers: { 'content-type': 'application/json' } },
  { name: 'form encoding (curl -d)', body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  { name: 'no content type', body: '{"a":1}' },
  { name: 'over the limit', body: `{"a":"${'x'.repeat(LIMIT)}"}`, headers: { 'content-type': 'application/json' } },
  { name: 'another charset', body: '{"a":"\u00e9"}', headers: { 'content-type': 'application/json; charset=latin1' } },
  { name: 'an unsupported charset', body: '{"a":1}', headers: { 'content-type': 'application/json; charset=koi9-x' } },
  {
    name: 'gzip',
    body: gzipSync('{"a":"zipped"}'),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  },
  {
    name: 'a broken gzip body',
    body: 'not gzip',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  },
];

describe('the JSON body reader', () => {
  for (const c of cases) {
    it(`answers ${c.name} as express.json does`, async () => {
      const send = (app: express.Express) =>
        request(app)
          .post('/')
          .set(c.headers ?? {})
          .send(c.body);
      const [a, b] = await Promise.all([send(ours), send(reference)]);
      assert.equal(a.status, b.status);
      assert.deepEqual(a.body, b.body);
    });
  }

  it('a declared length over the limit is a 413 at once, before any body arrives; the connection stays open', async () => {
    const server = appWith(createJsonBody(LIMIT)).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as { port: number };
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((r) => socket.once('connect', r));
      let got = '';
      const answered = new Promise<void>((resolve) =>
        socket.on('data', (d: Buffer) => {
          got += d.toString('latin1');
          if (got.includes('\r\n\r\n')) resolve();
        }),
      );
      socket.write(
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{`,
      );
      // express.json waits for the whole body first: nothing would arrive within this wait.
      const timer = new Promise<void>((_, reject) =>
        setTimeout(() => reject(new Error('no answer before the body arrived')), 2000),
      );
      await Promise.race([answered, timer]);
      socket.destroy();
      assert.match(got, /^HTTP\/1\.1 413 /);
      // A client still writing would lose the answer to a closed connection (EPIPE).
      assert.doesNotMatch(got, /\r\nconnection: close\r\n/i);
      assert.match(got, /entity\.too\.large/);
    } finally {
      server.close();
    }
  });

  it('a client that leaves mid-body is a request.aborted error, and nothing is parsed', async () => {
    const seen: { type?: string }[] = [];
    const server = appWith(createJsonBody(LIMIT), seen).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as { port: number };
      const socket = connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"model":',
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(seen[0]?.type, 'request.aborted');
    } finally {
      server.close();
    }
  });
});
