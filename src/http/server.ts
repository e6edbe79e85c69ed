import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  headersTooLarge,
  malformedRequest,
  requestTimeout,
  tooManyConnections,
  type ProxyError,
} from '../errors/index.js';
import { sendErrorAndClose, toRawHttpResponse } from './errors.js';

export interface HttpServerOptions {
  /** How long a client may take to send a whole request, headers and body, in ms (default 30 s). */
  bodyTimeoutMs?: number;
  /** Open connections one client address may hold (default 256). */
  maxClientConnections?: number;
  /** The classes requests and responses are made from (Node's own by default; see `expressMessages`). */
  messages?: { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse };
}

/** How long an answered connection stays open to drain what the client is still sending. */
const LINGER_MS = 1000;

/** The error to answer a `clientError` with, or undefined for a socket-level failure (ECONNRESET…). */
function toClientError(
  err: NodeJS.ErrnoException & { reason?: string },
  bodyTimeoutMs: number,
): ProxyError | undefined {
  const code = err.code ?? '';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestTimeout(bodyTimeoutMs / 1000, err);
  if (code === 'HPE_HEADER_OVERFLOW') return headersTooLarge(err);
  if (code.startsWith('HPE_'))
    return malformedRequest(
      `olp could not parse the request as HTTP/1.1: ${err.reason ?? err.message} (${code}).`,
      'malformed_request',
      err,
    );
  return undefined;
}

/** Counts open connections per client address; `admit` is false for one over the limit. */
function createConnectionLimit(limit: number) {
  const open = new Map<string, number>();
  return {
    admit(socket: Socket): boolean {
      const raw = socket.remoteAddress;
      if (raw === undefined) return true; // already closed
      const address = raw.startsWith('::ffff:') ? raw.slice(7) : raw;
      const n = open.get(address) ?? 0;
      if (n >= limit) return false;
      open.set(address, n + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
      return true;
    },
  };
}

/**
 * Every HTTP server olp makes comes from here. Each one answers malformed or too-slow HTTP and
 * connections over the per-address limit with an error envelope, then closes the connection.
 */
export function createHttpServer(app: RequestListener, opts: HttpServerOptions = {}): Server {
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 30_000;
  const limit = opts.maxClientConnections ?? 256;
  const connections = createConnectionLimit(limit);
  // The latest request whose headers arrived on each socket, to tell where an error belongs.
  const current = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  // Sockets that were answered and are closing: nothing more is served or answered on them.
  const closing = new WeakSet<Socket>();

  const server = createServer(
    {
      ...opts.messages,
      noDelay: true,
      // Node bounds only receiving a request, from its first byte to its last, not the response
      // (measured on Node 20: a 2.5 s reply under a 1 s requestTimeout is not cut, and an idle
      // keep-alive connection is not counted). Long CLI turns are bounded by the CLI's own timeouts.
      requestTimeout: bodyTimeoutMs,
      // Equal on purpose: Node swaps the two when headersTimeout is the larger (ConnectionsList::Expired).
      headersTimeout: bodyTimeoutMs,
      // Node checks for expired requests on this period (default 30 s), late by up to one period.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(bodyTimeoutMs / 4))),
    },
    (req, res) => {
      if (closing.has(req.socket)) return; // answered already; the socket is about to close
      current.set(req.socket, { req, res });
      app(req, res);
    },
  );

  // Marks a socket answered, and destroys it a little later whatever the client still does.
  const linger = (socket: Socket) => {
    closing.add(socket);
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(timer));
  };

  server.on('connection', (socket: Socket) => {
    if (connections.admit(socket)) return;
    linger(socket);
    socket.end(toRawHttpResponse(tooManyConnections(limit)));
  });

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    try {
      const e = toClientError(err, bodyTimeoutMs);
      // Answered already: the parser repeats its error on every later chunk; let the answer go out.
      if (closing.has(socket) && e !== undefined) return;
      if (e === undefined || !socket.writable) {
        socket.destroy();
        return;
      }
      const last = current.get(socket);
      if (last && !last.req.complete) {
        // The headers arrived and the app has the request: answer on its response unless one has started.
        if (last.res.headersSent) {
          socket.destroy();
          return;
        }
        // Node closes the connection once this response is out (it says `Connection: close`);
        // the linger starts then, so a pipelined response queued before it is not cut.
        closing.add(socket);
        last.res.once('finish', () => linger(socket));
        sendErrorAndClose(last.res, e);
        return;
      }
      if (last && !last.res.writableEnded) {
        // An earlier request is still being answered: raw bytes would corrupt its response.
        socket.destroy();
        return;
      }
      linger(socket);
      socket.end(toRawHttpResponse(e));
    } catch {
      socket.destroy();
    }
  });
  server.keepAliveTimeout = 65_000;
  return server;
}
