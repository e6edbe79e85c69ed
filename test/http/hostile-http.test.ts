// Hostile and malformed HTTP against a listening olp: every answer is a 4xx with the OpenAI
// envelope (never a 5xx, never a socket left hanging), and the body timeout bounds only the
// receiving of a request, not a long CLI turn. The app and its HTTP server are olp's own; the
// conversation behind them is scripted (no CLI runs).
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startScriptedServer } from '../support/scripted.js';

const BODY_TIMEOUT_S = 1;
const MAX_CONNECTIONS = 5;
const BODY_LIMIT = 64 * 1024;
/** Node sweeps for expired requests every 250 ms here; the rest is scheduling slack. */
const TIMEOUT_MARGIN_MS = 1500;

let t: Awaited<ReturnType<typeof startScriptedServer>>;
before(async () => {
  // Only the slow-turn test reaches the conversation; each of its deltas waits 400 ms.
  t = await startScriptedServer({
    config: { bodyTimeout: BODY_TIMEOUT_S, maxClientConnections: MAX_CONNECTIONS, bodyLimit: BODY_LIMIT },
  });
});
after(async () => {
  await t.close();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** From connecting to the full answer. */
  ms: number;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** One complete HTTP/1.1 response at the start of `buf`, or undefined while it is incomplete. */
function parseResponse(buf: Buffer): Omit<Answer, 'ms' | 'closed'> | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length < end + 4 + length) return undefined;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: buf.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/**
 * Sends `parts` on a fresh connection, `gapMs` apart (a drip) until an answer arrives, and
 * reads the answer; for `Connection: close` it also waits for the server to close.
 */
function exchange(parts: (string | Buffer)[], opts: { gapMs?: number; waitMs?: number } = {}): Promise<Answer> {
  const { gapMs = 0, waitMs = 6000 } = opts;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(t.port, '127.0.0.1');
    let drip: NodeJS.Timeout | undefined;
    let buf = Buffer.alloc(0);
    let answer: Omit<Answer, 'closed'> | undefined;
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(drip);
      socket.destroy();
      if (answer) resolve({ ...answer, closed });
      else
        reject(
          new Error(
            `no answer within ${waitMs} ms (connection ${closed ? 'closed' : 'open'}); got ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`,
          ),
        );
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const parsed = answer ? undefined : parseResponse(buf);
      if (!parsed) return;
      answer = { ...parsed, ms: performance.now() - started };
      if (parsed.headers.connection !== 'close') finish(false);
    });
    // A reset after the answer (the client was still sending) is expected.
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    const queue = [...parts];
    const send = () => {
      const part = queue.shift();
      if (part !== undefined && socket.writable && !answer) socket.write(part);
    };
    if (gapMs > 0) {
      send();
      drip = setInterval(send, gapMs);
    } else {
      while (queue.length > 0) send();
    }
  });
}

const auth = () => `Authorization: Bearer ${t.token}\r\n`;
/** A chat request with these body bytes and extra header lines, framed by Content-Length. */
function chatRequest(body: string | Buffer, headers = 'Content-Type: application/json\r\n'): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([
    Buffer.from(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}${headers}Content-Length: ${b.length}\r\n\r\n`,
    ),
    b,
  ]);
}
const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: olp\r\n${auth()}${headers}\r\n`;
const valid = JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });

interface Case {
  name: string;
  status: number;
  code: string;
  /** Default: the bytes of `send()` all at once on a fresh connection. */
  run?: () => Promise<Answer>;
  send?: () => (string | Buffer)[];
  gapMs?: number;
  /** The answer must arrive within this long. */
  withinMs?: number;
  /** The server must close the connection after answering. */
  closes?: boolean;
}

const timedOut = BODY_TIMEOUT_S * 1000 + TIMEOUT_MARGIN_MS;
const cases: Case[] = [
  {
    name: 'gzip body that does not decode',
    status: 400,
    code: 'invalid_encoding',
    send: () => [chatRequest('not gzip at all', 'Content-Type: application/json\r\nContent-Encoding: gzip\r\n')],
  },
  {
    name: 'truncated gzip body',
    status: 400,
    code: 'invalid_encoding',
    send: () => [
      chatRequest(gzipSync(valid).subarray(0, 20), 'Content-Type: application/json\r\nContent-Encoding: gzip\r\n'),
    ],
  },
  {
    name: 'deflate body that does not decode',
    status: 400,
    code: 'invalid_encoding',
    send: () => [chatRequest('not deflate', 'Content-Type: application/json\r\nContent-Encoding: deflate\r\n')],
  },
  {
    name: 'br body that does not decode',
    status: 400,
    code: 'invalid_encoding',
    send: () => [chatRequest('not brotli at all', 'Content-Type: application/json\r\nContent-Encoding: br\r\n')],
  },
  {
    name: 'unknown Content-Encoding',
    status: 400,
    code: 'invalid_encoding',
    send: () => [chatRequest(valid, 'Content-Type: application/json\r\nContent-Encoding: compress\r\n')],
  },
  {
    name: 'unsupported charset',
    status: 400,
    code: 'invalid_encoding',
    send: () => [chatRequest(valid, 'Content-Type: application/json; charset=latin1\r\n')],
  },
  { name: 'GET /v1/models/%ff', status: 400, code: 'invalid_path', send: () => [get('/v1/models/%ff')] },
  { name: 'GET /v1/chat/%E0%A4%A', status: 400, code: 'invalid_path', send: () => [get('/v1/chat/%E0%A4%A')] },
  {
    name: 'POST /v1/chat/completions%ff',
    status: 400,
    code: 'invalid_path',
    send: () => [chatRequest(valid).toString().replace('/v1/chat/completions', '/v1/chat/completions%ff')],
  },
  {
    name: 'GET /olp/keys/%c3%28 (invalid UTF-8)',
    status: 400,
    code: 'invalid_path',
    send: () => [get('/olp/keys/%c3%28')],
  },
  {
    name: 'bad chunk size',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
  },
  {
    name: 'Content-Length with Transfer-Encoding',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
  },
  {
    name: 'Transfer-Encoding other than chunked',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [`POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Transfer-Encoding: gzip\r\n\r\n{}`],
  },
  {
    name: 'Content-Length that is not a number',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [`POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Length: abc\r\n\r\n{}`],
  },
  {
    name: 'two different Content-Lengths',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    ],
  },
  {
    name: 'a request line that is not HTTP',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => ['HELLO THERE\r\n\r\n'],
  },
  {
    name: 'a control character in a header',
    status: 400,
    code: 'malformed_request',
    closes: true,
    send: () => [`GET /v1/models HTTP/1.1\r\nHost: olp\r\nX-Bad: a\x01b\r\n\r\n`],
  },
  {
    name: '100 KB header',
    status: 431,
    code: 'headers_too_large',
    closes: true,
    send: () => [get('/v1/models', `X-Big: ${'a'.repeat(100_000)}\r\n`)],
  },
  {
    name: '100 KB URL',
    status: 431,
    code: 'headers_too_large',
    closes: true,
    send: () => [get(`/v1/models/${'a'.repeat(100_000)}`)],
  },
  { name: 'non-JSON body', status: 400, code: 'invalid_json', send: () => [chatRequest('hello there')] },
  {
    name: 'multipart body (wrong content type)',
    status: 400,
    code: 'invalid_json',
    send: () => [
      chatRequest(
        '--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nsonnet\r\n--b--\r\n',
        'Content-Type: multipart/form-data; boundary=b\r\n',
      ),
    ],
  },
  { name: 'JSON array', status: 400, code: 'invalid_request', send: () => [chatRequest('[{"model":"sonnet"}]')] },
  { name: 'JSON null', status: 400, code: 'invalid_request', send: () => [chatRequest('null')] },
  { name: 'empty body', status: 400, code: 'invalid_request', send: () => [chatRequest('')] },
  {
    name: 'body over the limit',
    status: 413,
    code: 'request_too_large',
    send: () => [
      chatRequest(
        JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT + 10) }] }),
      ),
    ],
  },
  {
    name: 'wrong method',
    status: 404,
    code: 'not_found',
    send: () => [`DELETE /v1/models HTTP/1.1\r\nHost: olp\r\n${auth()}\r\n`],
  },
  {
    name: 'unknown route',
    status: 404,
    code: 'not_found',
    send: () => [chatRequest(valid).toString().replace('/v1/chat/completions', '/v1/completions')],
  },
  // Refused from its header, well before the body timeout (it used to wait for it: 408); the
  // connection stays open to read off the rest (test/http/read-off.test.ts).
  ...(['/v1/chat/completions', '/v1/responses'] as const).map(
    (path): Case => ({
      name: `declared 50 MB body on ${path}, 1 byte sent`,
      status: 413,
      code: 'request_too_large',
      withinMs: BODY_TIMEOUT_S * 1000 - 200,
      send: () => [
        `POST ${path} HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{`,
      ],
    }),
  ),
  {
    name: 'body dripped a byte every 100 ms',
    status: 408,
    code: 'request_timeout',
    withinMs: timedOut,
    closes: true,
    gapMs: 100,
    send: () => [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
      ...'x'.repeat(1000),
    ],
  },
  {
    name: 'chunked body dripped a chunk every 100 ms',
    status: 408,
    code: 'request_timeout',
    withinMs: timedOut,
    closes: true,
    gapMs: 100,
    send: () => [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: olp\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      ...Array.from({ length: 100 }, () => '1\r\nx\r\n'),
    ],
  },
  {
    name: 'headers dripped a line every 100 ms',
    status: 408,
    code: 'request_timeout',
    withinMs: timedOut,
    closes: true,
    gapMs: 100,
    send: () => ['GET /v1/models HTTP/1.1\r\n', ...Array.from({ length: 100 }, (_, i) => `X-Drip-${i}: y\r\n`)],
  },
  {
    name: 'a connection that sends nothing',
    status: 408,
    code: 'request_timeout',
    withinMs: timedOut,
    closes: true,
    send: () => [],
  },
  {
    name: `connection ${MAX_CONNECTIONS + 1} from one address`,
    status: 429,
    code: 'too_many_connections',
    closes: true,
    async run() {
      // Let earlier cases' connections finish closing, then hold the limit open.
      await new Promise((r) => setTimeout(r, 300));
      const held = await Promise.all(
        Array.from(
          { length: MAX_CONNECTIONS },
          () =>
            new Promise<Socket>((resolve) => {
              const s = connect(t.port, '127.0.0.1', () => resolve(s));
              s.on('error', () => {});
            }),
        ),
      );
      try {
        return await exchange([get('/v1/models')], { waitMs: 3000 });
      } finally {
        for (const s of held) s.destroy();
        // The server frees the slots when it sees the closes; later tests need them.
        const deadline = Date.now() + 3000;
        while ((await exchange([get('/v1/models')])).status === 429 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
      }
    },
  },
];

describe('hostile HTTP gets a 4xx envelope, never a 5xx or a hung socket', () => {
  const answered: { name: string; status: number }[] = [];
  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const a = c.run ? await c.run() : await exchange(c.send?.() ?? [], { gapMs: c.gapMs });
      answered.push({ name: c.name, status: a.status });
      assert.ok(a.status >= 400 && a.status < 500, `status ${a.status}: ${a.body}`);
      assert.equal(a.status, c.status, a.body);
      const body = JSON.parse(a.body) as { error: Record<string, unknown> };
      assert.deepEqual(Object.keys(body).sort(), ['error']);
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(body.error.code, c.code);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(typeof body.error.type, 'string');
      assert.ok(body.error.param === null || typeof body.error.param === 'string');
      assert.match(a.headers['content-type'] ?? '', /^application\/json/);
      // Only a refused connection is worth retrying (after Retry-After); bad input is not.
      if (c.code === 'too_many_connections') {
        assert.equal(a.headers['x-should-retry'], 'true');
        assert.equal(a.headers['retry-after'], '1');
      } else {
        assert.equal(a.headers['x-should-retry'], 'false');
      }
      if (c.withinMs !== undefined) assert.ok(a.ms < c.withinMs, `answered after ${Math.round(a.ms)} ms`);
      if (c.status === 408) assert.ok(a.ms >= BODY_TIMEOUT_S * 1000 - 50, `408 too early: ${Math.round(a.ms)} ms`);
      if (c.closes) {
        assert.equal(a.headers.connection, 'close');
        assert.ok(a.closed, 'the server closed the connection');
      }
    });
  }
  it('summary: no 5xx over the whole table', () => {
    const fiveXX = answered.filter((a) => a.status >= 500);
    console.log(
      `hostile HTTP table: ${cases.length} cases, ${answered.length} answered, ${fiveXX.length} answered 5xx`,
    );
    assert.equal(answered.length, cases.length);
    assert.deepEqual(fiveXX, []);
    assert.deepEqual(
      t.logs.filter((l) => l.msg === 'internal error'),
      [],
    );
  });
});

describe('the body timeout bounds receiving a request, nothing else', () => {
  it('a CLI turn slower than the body timeout still succeeds', async () => {
    const started = performance.now();
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:slow]] take your time' }] }),
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    const ms = performance.now() - started;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.match(body.choices[0]?.message.content ?? '', /take your time/);
    assert.ok(
      ms > BODY_TIMEOUT_S * 1000 + 500,
      `the turn took only ${Math.round(ms)} ms; it must outlast the body timeout`,
    );
  });
  it('a streamed CLI turn slower than the body timeout is not cut', async () => {
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        stream: true,
        messages: [{ role: 'user', content: '[[fake:slow]] stream slowly' }],
      }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /data: \[DONE\]/);
    assert.doesNotMatch(text, /"error"/);
  });
  it('a keep-alive connection idle longer than the body timeout stays usable', async () => {
    const socket = connect(t.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    try {
      const first = await exchangeOn(socket, get('/v1/models'));
      assert.equal(first.status, 200);
      await new Promise((r) => setTimeout(r, BODY_TIMEOUT_S * 1000 + 700));
      const second = await exchangeOn(socket, get('/v1/models'));
      assert.equal(second.status, 200);
    } finally {
      socket.destroy();
    }
  });
});

/** One request and its response on an open keep-alive socket, leaving the socket open. */
function exchangeOn(socket: Socket, request: string): Promise<Omit<Answer, 'ms' | 'closed'>> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const parsed = parseResponse(buf);
      if (!parsed) return;
      cleanup();
      resolve(parsed);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the server closed the keep-alive connection'));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(request);
  });
}
