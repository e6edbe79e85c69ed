// The lines of a CLI's stderr that echo its input (the prompt), found and replaced by a marker.
import { redact } from './redact.js';

/**
 * Lines where a CLI repeats the input it could not parse (claude 2.1.197: `Error parsing streaming input line:
 * <line>`).
 */
const ECHO_PREFIX = /^(.*?error parsing (?:streaming )?input line:?)\s*.+$/i;
const ECHO_MARK = '[input omitted]';
/** Inputs up to this size are searched for echoed fragments; larger ones rely on the known prefixes. */
const ECHO_SEARCH_LIMIT = 2 * 1024 * 1024;
const ECHO_WINDOW = 32;

/** True when the line repeats a stretch of the input (a CLI quoting the prompt back in an error). */
function echoesInput(line: string, input: string): boolean {
  if (line.length < ECHO_WINDOW || input.length < ECHO_WINDOW || input.length > ECHO_SEARCH_LIMIT) return false;
  const colon = line.indexOf(': ');
  const offsets = new Set([
    0,
    colon === -1 ? 0 : colon + 2,
    Math.max(0, Math.floor(line.length / 2) - ECHO_WINDOW / 2),
    line.length - ECHO_WINDOW,
  ]);
  for (const at of offsets) {
    const window = line.slice(at, at + ECHO_WINDOW);
    if (window.length === ECHO_WINDOW && window.trim().length >= ECHO_WINDOW / 2 && input.includes(window)) return true;
  }
  return false;
}

/**
 * A CLI's stderr made safe to show or store: secrets redacted, and lines that echo the request's
 * input (the prompt) replaced by a marker. `input` is what was written to the CLI's stdin.
 */
export function sanitizeStderr(stderr: string, input = ''): string {
  if (stderr === '') return stderr;
  const lines = stderr.split('\n').map((line) => {
    const m = ECHO_PREFIX.exec(line);
    if (m) return `${m[1]} ${ECHO_MARK}`;
    return echoesInput(line, input) ? ECHO_MARK : line;
  });
  return redact(lines.join('\n'));
}
