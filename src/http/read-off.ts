import type { IncomingMessage } from 'node:http';

const MiB = 1024 * 1024;

/**
 * How many bytes of a refused request's body olp reads and drops: four times the body limit, at
 * least 64 MiB. A client still writing its body when olp answers (fetch, and so the openai and
 * Anthropic SDKs) hears the answer only while olp reads on; a connection closed under it makes
 * its next write fail (EPIPE) and loses the answer. Past this, olp closes the connection: the
 * body timeout bounds the time a read-off takes, this its bytes.
 */
export function readOffLimit(bodyLimit: number): number {
  return Math.max(4 * bodyLimit, 64 * MiB);
}

/** Closes the request's connection once more than `limit` bytes of its body arrive from now on. */
export function capBody(req: IncomingMessage, limit: number): void {
  if (req.complete) return;
  let left = limit;
  const stop = () => {
    req.off('data', onData);
    req.off('end', stop);
    req.off('close', stop);
  };
  const onData = (chunk: Buffer) => {
    left -= chunk.length;
    if (left >= 0) return;
    stop();
    req.socket.destroy();
  };
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
}
