import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

// Secrets a person gives `olp logins`: piped in (a file, another command), or pasted at a prompt
// that does not echo them. Never from argv, where `ps` and shell history would keep them.

/** The person pressed Ctrl-C at a prompt. */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** A secret larger than this is not a token or a key: something else was piped in. */
const MAX_SECRET_BYTES = 64 * 1024;

/** All of a piped stdin, as text (bounded). */
export async function readPipedSecret(input: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > MAX_SECRET_BYTES) throw new Error(`stdin holds more than ${MAX_SECRET_BYTES} bytes: that is no token`);
    parts.push(b);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** What a terminal adds around pasted text when bracketed paste is on (ESC [200~ … ESC [201~). */
const PASTE_MARKS = /\u001b\[20[01]~/g;

/** Lines pasted together arrive within this long of each other; later ones belong to the next question. */
const PASTE_SETTLE_MS = 150;

/**
 * Asks at the terminal and reads one answer without echoing it. A long token that the terminal
 * wrapped may be pasted as several lines: lines that arrive together are joined.
 */
export function askHidden(question: string, input: NodeJS.ReadStream, say: NodeJS.WritableStream): Promise<string> {
  const mute = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  // The terminal stops echoing (raw mode) before the question is seen, so no answer is ever shown.
  const rl = createInterface({ input, output: mute, terminal: true });
  say.write(question);
  return new Promise<string>((resolve, reject) => {
    const lines: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: Error) => {
      if (timer) clearTimeout(timer);
      rl.removeAllListeners();
      rl.close();
      say.write('\n');
      if (err) reject(err);
      else resolve(lines.join('').replace(PASTE_MARKS, ''));
    };
    rl.on('line', (line) => {
      lines.push(line);
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => finish(), PASTE_SETTLE_MS);
    });
    rl.on('SIGINT', () => finish(new Cancelled()));
    rl.on('close', () => finish());
  });
}
