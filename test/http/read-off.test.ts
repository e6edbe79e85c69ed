// What olp reads of a request it refuses before reading its body (too large, not authenticated):
// the answer goes out at once, the rest of the body is read off and dropped so a client still
// writing hears it, and the read-off is bounded in bytes (readOffLimit) and in time (the body
// timeout), then the connection is closed. olp's own HTTP server on loopback; no CLI runs.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { readOffLimit } from '../../src/http/read-off.js';
import { startScriptedServer } from '../support/scripted.js';

const BODY_LIMIT = 64 * 1024;
const BOUND = readOffLimit(BODY_LIMIT);
/** What the loopback socket buffers on both sides may hold beyond what olp has read. */
const SLACK = 32 * 1024 * 1024;
const MiB = 1024 * 1024;

type Server = Awaited<ReturnType<typeof startScriptedServer>>;

/** The status of the first response in `buf`, once its head has arrived. */
function statusOf(buf: Buffer): number | undefined {
  if (buf.indexOf('\r\n\r\n') < 0) return undefined;
  return Number(buf.subarray(0, 16).toString('latin1').split(' ')[1]);
}

interface Flooded {
  status: number | undefined;
  /** Bytes of the body handed to the socket before it closed. */
  written: number;
  closed: boolean;
}

/** Sends `head`, then `chunk` again and again (at most `max` bytes) until the server closes the connection. */
function flood(port: number, head: string, chunk: Buffer, max: number): Promise<Flooded> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let written = 0;
    let buf = Buffer.alloc(0);
    let closed = false;
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      if (buf.length < 64 * 1024) buf = Buffer.concat([buf, d]);
    });
    const done = () => resolve({ status: statusOf(buf), written, closed });
    socket.once('close', () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    // Everything was sent and the connection is still open long after: say so (the test fails on
    // it). The bound is patience for a busy machine; a passing run closes long before it.
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      while (!closed && written < max) {
        written += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!closed && timer === undefined)
        timer = setTimeout(() => {
          done();
          socket.destroy();
        }, 30_000);
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/** Reads one response head on `socket` and resolves with its status. */
function nextStatus(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const status = statusOf(buf);
      if (status === undefined) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(status);
    };
    const onClose = () => reject(new Error(`closed before an answer; got ${JSON.stringify(buf.toString('latin1'))}`));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

const MiBChunk = Buffer.alloc(MiB, 'x');
const chunked = Buffer.concat([Buffer.from(`${MiB.toString(16)}\r\n`), MiBChunk, Buffer.from('\r\n')]);

describe('a request refused before its body: the body is read off, to a bound', () => {
  let t: Server;
  before(async () => {
    // A long body timeout: only the byte bound can stop these read-offs.
    t = await startScriptedServer({ config: { bodyLimit: BODY_LIMIT, bodyTimeout: 60 } });
  });
  after(async () => t.close());
  const head = (path: string, framing: string, authorized = true) =>
    `POST ${path} HTTP/1.1\r\nHost: olp\r\n${authorized ? `Authorization: Bearer ${t.token}\r\n` : ''}Content-Type: application/json\r\nAnthropic-Version: 2023-06-01\r\n${framing}\r\n`;

  it('a declared length over the limit: 413 at once, the rest read off, and the connection serves the next request', async () => {
    const socket = connect(t.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((r) => socket.once('connect', r));
    try {
      const declared = 2 * BODY_LIMIT;
      const first = nextStatus(socket);
      socket.write(head('/v1/chat/completions', `Content-Length: ${declared}\r\n`));
      assert.equal(await first, 413, 'answered before any of the body was sent');
      socket.write(Buffer.alloc(declared, 'x'));
      const second = nextStatus(socket);
      socket.write(`GET /v1/models HTTP/1.1\r\nHost: olp\r\nAuthorization: Bearer ${t.token}\r\n\r\n`);
      assert.equal(await second, 200);
    } finally {
      socket.destroy();
    }
  });

  it(`a declared 1 GiB body that keeps coming: 413, then the connection is closed after some ${BOUND / MiB} MiB`, async () => {
    const f = await flood(t.port, head('/v1/messages', `Content-Length: ${1024 * MiB}\r\n`), MiBChunk, 4 * BOUND);
    assert.equal(f.status, 413);
    assert.ok(f.closed, `still open after ${f.written / MiB} MiB`);
    assert.ok(f.written < BOUND + SLACK, `olp took ${f.written / MiB} MiB`);
  });

  it('a chunked body that keeps coming (express.json reads one over the limit to its end) is cut off too', async () => {
    const f = await flood(t.port, head('/v1/chat/completions', 'Transfer-Encoding: chunked\r\n'), chunked, 4 * BOUND);
    assert.ok(f.closed, `still open after ${f.written / MiB} MiB`);
    assert.ok(f.written < BOUND + SLACK, `olp took ${f.written / MiB} MiB`);
  });

  it('an unauthenticated body that keeps coming: 401, then cut off', async () => {
    const f = await flood(
      t.port,
      head('/v1/chat/completions', `Content-Length: ${1024 * MiB}\r\n`, false),
      MiBChunk,
      4 * BOUND,
    );
    assert.equal(f.status, 401);
    assert.ok(f.closed, `still open after ${f.written / MiB} MiB`);
    assert.ok(f.written < BOUND + SLACK, `olp took ${f.written / MiB} MiB`);
  });
});

describe('a read-off is bounded in time by the body timeout', () => {
  let t: Server;
  before(async () => {
    t = await startScriptedServer({ config: { bodyLimit: BODY_LIMIT, bodyTimeout: 1 } });
  });
  after(async () => t.close());

  it('a declared 50 MB body with none sent: 413 at once, and the connection closed once the body timeout passes', async () => {
    const socket = connect(t.port, '127.0.0.1');
    socket.on('error', () => {});
    const started = performance.now();
    await new Promise((r) => socket.once('connect', r));
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
    try {
      const status = nextStatus(socket);
      socket.write(
        `POST /v1/messages HTTP/1.1\r\nHost: olp\r\nAuthorization: Bearer ${t.token}\r\nAnthropic-Version: 2023-06-01\r\nContent-Type: application/json\r\nContent-Length: ${50 * MiB}\r\n\r\n{`,
      );
      // "At once": the 413 comes while the connection is still open, not with the body
      // timeout's close (ordered by events, not timed, so a busy machine cannot fail it).
      let closedYet = false;
      void closed.then(() => (closedYet = true));
      assert.equal(await status, 413);
      assert.equal(closedYet, false, 'answered before the body timeout closed the connection');
      // Then the connection is closed, and not before the body timeout (1 s) has passed.
      const closedMs = await closed;
      assert.ok(closedMs >= 900, `closed after ${Math.round(closedMs)} ms`);
    } finally {
      socket.destroy();
    }
  });
});
