import type { DestinationStream } from 'pino';
import { toTextLine } from './text-line.js';

export type LogFormat = 'text' | 'json';

/** Bytes the log may have waiting for a slow or stalled reader before new lines are dropped. */
const MAX_PENDING_BYTES = 1024 * 1024;
/** Lines held while start-up holds the log (see `hold`); more are dropped. */
const MAX_HELD_LINES = 1000;

/** A Writable as the log needs it: process.stderr, or a test's stream. */
type Target = NodeJS.WritableStream & { writableLength?: number };

export interface LogOutput extends DestinationStream {
  /** From now on lines wait (start-up: the summary for a person goes first); those of `omit` are dropped. */
  hold(omit?: ReadonlySet<string>): void;
  /** Writes what was held, in order, and goes back to writing at once. */
  release(): void;
  /** pino's flush: calls back once the target took what was written, or after a second at most. */
  flush(cb?: (err?: Error) => void): void;
  /** Resolves once the target took what was written, or after `timeoutMs`: an exit never waits on a reader. */
  settle(timeoutMs: number): Promise<void>;
  /** Lines dropped because the reader was gone or too far behind. */
  readonly dropped: number;
}

/** The event of a pino JSON line, without parsing all of it when it has none. */
function eventOf(json: string): string | undefined {
  const m = /"event":"([^"]*)"/.exec(json);
  return m?.[1];
}

/**
 * The daemon's log destination: JSON lines or one readable line per record, written to a Node
 * stream (process.stderr) and never waited on. pino's own destination (sonic-boom) flushes
 * synchronously at exit and retries a failed write for ever: with stderr a pipe whose reader had
 * gone (`olp serve 2>&1 | head -1`) that loop held the process, deaf to SIGTERM. Here a write error
 * ends the log, a reader that stops reading costs at most a megabyte of lines (then they are
 * dropped), and nothing runs at exit.
 */
export function createLogOutput(target: Target, format: LogFormat): LogOutput {
  let broken = false;
  let dropped = 0;
  let held: string[] | null = null;
  let omit: ReadonlySet<string> = new Set();
  target.on('error', () => {
    broken = true;
  });

  function out(line: string): void {
    if (broken || (target.writableLength ?? 0) > MAX_PENDING_BYTES) {
      dropped++;
      return;
    }
    target.write(format === 'text' ? toTextLine(line) : line);
  }

  function settle(timeoutMs: number): Promise<void> {
    if (broken || !target.writableLength) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        target.off('drain', done);
        target.off('error', done);
        target.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      target.once('drain', done);
      target.once('error', done);
      target.once('close', done);
    });
  }

  return {
    write(line: string) {
      if (held === null) return out(line);
      const event = eventOf(line);
      if (event !== undefined && omit.has(event)) return;
      if (held.length < MAX_HELD_LINES) held.push(line);
      else dropped++;
    },
    hold(events = new Set()) {
      held ??= [];
      omit = events;
    },
    release() {
      const lines = held ?? [];
      held = null;
      omit = new Set();
      for (const l of lines) out(l);
    },
    flush(cb) {
      void settle(1000).then(() => cb?.());
    },
    settle,
    get dropped() {
      return dropped;
    },
  };
}
