import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * Every HTTP server olp makes comes from here, so each one destroys sockets that send
 * malformed HTTP instead of leaving them (or an unhandled error) behind.
 */
export function createHttpServer(app: RequestListener): Server {
  const server = createServer({ noDelay: true }, app);
  server.on('clientError', (_err, socket) => {
    socket.destroy();
  });
  // Long CLI turns are normal; the CLI's own timeouts bound a request, not the socket.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  return server;
}
