import type { Readable, Writable } from 'node:stream';

const WRITE_CHUNK = 64 * 1024;

/** Resolves when the stream has ended or closed, or after `ms`, whichever comes first. */
export function endedWithin(stream: Readable | null | undefined, ms: number): Promise<boolean> {
  if (!stream || stream.readableEnded || stream.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      clearTimeout(timer);
      stream.off('end', onEnd);
      stream.off('close', onEnd);
      resolve(ok);
    };
    const onEnd = done(true);
    const timer = setTimeout(done(false), ms);
    stream.once('end', onEnd);
    stream.once('close', onEnd);
  });
}

/**
 * Writes `data` in chunks, waiting for 'drain' when the pipe is full, then closes stdin unless
 * `keepOpen`; stops quietly if stdin closes. False when not everything could be written.
 */
export async function writeAll(stdin: Writable, data: string, keepOpen = false): Promise<boolean> {
  const buf = Buffer.from(data, 'utf8');
  for (let off = 0; off < buf.length; off += WRITE_CHUNK) {
    if (stdin.destroyed || stdin.writableEnded) return false;
    if (!stdin.write(buf.subarray(off, off + WRITE_CHUNK))) {
      const open = await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => () => {
          stdin.off('drain', onDrain);
          stdin.off('close', onClose);
          stdin.off('error', onClose);
          resolve(ok);
        };
        const onDrain = done(true);
        const onClose = done(false);
        stdin.once('drain', onDrain);
        stdin.once('close', onClose);
        stdin.once('error', onClose);
      });
      if (!open) return false;
    }
  }
  if (stdin.destroyed) return false;
  if (!keepOpen) stdin.end();
  return true;
}
