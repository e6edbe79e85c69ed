// Whether a conversation's system prompt changed in meaning or only drifted: Claude Code writes
// the model's context size (2.1.197), the date, the working directory's git status into its
// system prompt, and these change between its processes and turns of one conversation.

/**
 * Most of a system prompt that may differ (in characters of the lines that differ) and still be
 * the same conversation's.
 */
const DRIFT_SHARE = 0.1;

/** The characters of the lines of `a` that `b` does not have (as many times as `a` has them more). */
function unmatched(a: readonly string[], b: readonly string[]): number {
  const left = new Map<string, number>();
  for (const line of b) left.set(line, (left.get(line) ?? 0) + 1);
  let chars = 0;
  for (const line of a) {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    else chars += line.length + 1;
  }
  return chars;
}

/**
 * The system prompt the conversation's CLI has, when the request's differs from it only in a few
 * lines (at most a tenth of the text): the conversation goes on with the one the CLI has (a
 * resumed CLI keeps the one it started with anyway). Undefined when the change is one of meaning,
 * or no earlier prompt is known.
 */
export function driftedFrom(had: string | null | undefined, now: string | null): string | undefined {
  if (had === undefined || had === null || now === null || had === now) return undefined;
  const a = had.split('\n');
  const b = now.split('\n');
  const changed = unmatched(a, b) + unmatched(b, a);
  return changed <= DRIFT_SHARE * Math.max(had.length, now.length) ? had : undefined;
}
