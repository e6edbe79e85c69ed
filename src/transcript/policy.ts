import { contextLengthExceeded, type ProxyError } from '../errors/index.js';
import type { Transcript, Turn } from './types.js';

/** olp's token estimate for text no provider has counted yet: four characters a token. */
export const DEFAULT_CHARS_PER_TOKEN = 4;

/**
 * The share of a model's window `--context-overflow trim` trims a re-sent conversation to. A CLI
 * refuses a prompt well before the window is full: claude keeps room for its reply and compacts
 * (or, for a conversation sent as one exchange, fails with "Prompt is too long") at about 80 % of
 * it, so trimming to the whole window leaves a prompt it will not send.
 */
export const TRIM_FRACTION = 0.75;

/** Tokens for a number of characters: four characters a token unless a calibrated rate is given. */
export function charsToTokens(chars: number, charsPerToken = DEFAULT_CHARS_PER_TOKEN): number {
  return Math.ceil(chars / charsPerToken);
}

/** The characters of a conversation's text (system prompt and turns): what a token estimate counts. */
export function transcriptChars(turns: readonly Turn[], system: string | null): number {
  return (system?.length ?? 0) + turns.reduce((n, t) => n + t.text.length, 0);
}

/** The images (and documents) of these turns. */
export function imageCount(turns: readonly Turn[]): number {
  return turns.reduce((n, t) => n + (t.images?.length ?? 0), 0);
}

/** The tokens olp counts for an image (or a document): about what the providers charge for one. */
export const IMAGE_TOKENS = 1000;

/** A token count for these turns: characters at the given rate (4 a token by default), IMAGE_TOKENS per image. */
export function estimateTurnTokens(
  turns: readonly Turn[],
  system: string | null,
  charsPerToken = DEFAULT_CHARS_PER_TOKEN,
): number {
  return charsToTokens(transcriptChars(turns, system), charsPerToken) + imageCount(turns) * IMAGE_TOKENS;
}

/** A conversation as it can be sent whole (possibly trimmed), or why it cannot. */
export type Fitted =
  | { ok: true; transcript: Transcript & { omitted: number }; tokens: number }
  | { ok: false; error: ProxyError };

/**
 * Keeps a transcript that is sent whole within a model's context. Over the limit it is either
 * refused (400 context_length_exceeded) or, with `trim`, trimmed oldest turn first to
 * `TRIM_FRACTION` of the limit, never cut inside a turn; the last turn always stays and the
 * rendered prompt says how many turns were left out. `charsPerToken` is the rate learnt from
 * the provider's own counts (see calibration.ts).
 */
export function fitContext(
  t: Transcript,
  limitTokens: number,
  overflow: 'refuse' | 'trim',
  charsPerToken = DEFAULT_CHARS_PER_TOKEN,
): Transcript & { omitted: number } {
  const fitted = tryFitContext(t, limitTokens, overflow, charsPerToken);
  if (!fitted.ok) throw fitted.error;
  return fitted.transcript;
}

/** `fitContext` as a value: the fitted transcript and its estimate, or the error it would throw. */
export function tryFitContext(
  t: Transcript,
  limitTokens: number,
  overflow: 'refuse' | 'trim',
  charsPerToken = DEFAULT_CHARS_PER_TOKEN,
): Fitted {
  const estimate = (turns: readonly Turn[]) => estimateTurnTokens(turns, t.system, charsPerToken);
  const all = estimate(t.turns);
  if (all <= limitTokens) return { ok: true, transcript: { ...t, omitted: 0 }, tokens: all };
  if (overflow === 'refuse' || t.turns.length <= 1) {
    return {
      ok: false,
      error: contextLengthExceeded(
        `about ${all} tokens against a limit of ${limitTokens} for this model; shorten the conversation` +
          (overflow === 'refuse' ? ' (or ask the operator to set contextOverflow to trim)' : ''),
      ),
    };
  }
  const budget = Math.floor(limitTokens * TRIM_FRACTION);
  let turns = t.turns;
  while (turns.length > 1 && estimate(turns) > budget) turns = turns.slice(1);
  // A conversation must not open with the answer to a dropped question.
  while (turns.length > 1 && turns[0]!.role !== 'user') turns = turns.slice(1);
  const tokens = estimate(turns);
  if (tokens > budget)
    return {
      ok: false,
      error: contextLengthExceeded(
        `the last message alone is about ${tokens} tokens, over the ${budget} a trimmed conversation may take ` +
          `for this model (${TRIM_FRACTION * 100} % of its ${limitTokens})`,
      ),
    };
  return { ok: true, transcript: { system: t.system, turns, omitted: t.turns.length - turns.length }, tokens };
}
