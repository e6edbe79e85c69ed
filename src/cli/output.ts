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

// C0 controls (ESC, BEL, CR, line breaks…), DEL, C1 controls (U+009B is a CSI to many terminals),
// the line and paragraph separators, and the bidirectional overrides and isolates.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A stored string as a terminal may show it: every control character written as an escape
 * (`\x1b`, `\u{202e}`). A model id, key name or file name is chosen by a client or a script; printed
 * raw, an ESC or BEL in it sets the owner's terminal title, clears the screen or rewrites what
 * the owner reads, and a line break in it forges a table row.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** `1 s`, `15 s`, `0.3 s`: a time limit as said to a person. */
export function toSeconds(seconds: number): string {
  return `${Number(seconds.toFixed(1))} s`;
}

/** Rows of cells as aligned columns, two spaces apart, each line's trailing spaces trimmed. */
export function toColumns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
