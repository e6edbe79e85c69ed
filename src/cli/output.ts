/** Where a command writes: quiet once its reader has gone (`olp doctor | head -3`), as Unix tools are. */
export interface Sink {
  /** Writes text unless the reader has gone; false when the caller should wait for `drain()` first. */
  write(text: string): boolean;
  /** Resolves once buffered output has gone out: true to go on, false when the reader has gone. */
  drain(): Promise<boolean>;
  /** The reader has gone (EPIPE or any other write error): nothing more is written. */
  readonly closed: boolean;
}

/**
 * Wraps process.stdout or process.stderr. A closed pipe raises EPIPE as an 'error' event, which
 * crashes Node when nobody listens; here it only marks the sink closed, and later writes are dropped.
 */
export function createSink(stream: NodeJS.WritableStream): Sink {
  let closed = false;
  stream.on('error', () => {
    closed = true;
  });
  return {
    write(text) {
      if (closed) return false;
      return stream.write(text);
    },
    drain() {
      if (closed) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('error', done);
          stream.off('close', done);
          resolve(!closed);
        };
        stream.once('drain', done);
        stream.once('error', done);
        stream.once('close', done);
      });
    },
    get closed() {
      return closed;
    },
  };
}
