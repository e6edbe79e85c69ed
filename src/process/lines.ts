import { StringDecoder } from 'node:string_decoder';

/** The longest single stdout line olp holds (64 MiB): past it the run fails as bad output. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Thrown by the splitter when one line grows past its cap. */
export class LineTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`a single output line is longer than ${limit} bytes`);
    this.name = 'LineTooLongError';
  }
}

/**
 * Splits a byte stream into lines, whatever the chunk boundaries (mid-line, mid-character).
 * Linear in the input: each chunk is scanned once for newlines, and the unfinished line is kept
 * as a list of pieces joined only when its newline arrives.
 */
export function createLineSplitter(maxLineBytes = MAX_LINE_BYTES) {
  const decoder = new StringDecoder('utf8');
  let pending: string[] = [];
  let pendingBytes = 0;

  const emit = (line: string, out: string[]) => {
    if (line.trim() !== '') out.push(line.endsWith('\r') ? line.slice(0, -1) : line);
  };

  return {
    /** The complete, non-blank lines this chunk finishes; throws LineTooLongError past the cap. */
    push(chunk: Buffer): string[] {
      const text = decoder.write(chunk);
      const lines: string[] = [];
      let start = 0;
      let nl = text.indexOf('\n');
      if (nl !== -1 && pending.length > 0) {
        pending.push(text.slice(0, nl));
        emit(pending.join(''), lines);
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      while (nl !== -1) {
        emit(text.slice(start, nl), lines);
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      if (start < text.length) {
        const rest = start === 0 ? text : text.slice(start);
        pending.push(rest);
        pendingBytes += start === 0 ? chunk.length : Buffer.byteLength(rest);
        if (pendingBytes > maxLineBytes) {
          pending = [];
          pendingBytes = 0;
          throw new LineTooLongError(maxLineBytes);
        }
      }
      return lines;
    },
    /** Whatever is left once the stream ends (a last line without a newline). */
    end(): string[] {
      const rest = pending.join('') + decoder.end();
      pending = [];
      pendingBytes = 0;
      return rest.trim() === '' ? [] : [rest];
    },
  };
}
