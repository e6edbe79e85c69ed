import { contextLengthExceeded } from '../errors/index.js';
import type { Transcript, Turn } from './index.js';

/** olp's one token estimate for text no CLI has counted: four characters a token. */
export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** A rough token count: 4 characters a token, about 1,000 per image. */
export function estimateTurnTokens(turns: readonly Turn[], system: string | null): number {
  return charsToTokens((system?.length ?? 0) + turns.reduce((n, t) => n + t.text.length, 0)) + turns.reduce((n, t) => n + (t.images?.length ?? 0) * 1000, 0);
}

/**
 * Keeps a transcript within a model's context: over the limit it is either refused (400
 * context_length_exceeded) or trimmed oldest turn first, never cut inside a turn; the last turn
 * always stays and the rendered prompt says how many turns were left out.
 */
export function fitContext(t: Transcript, limitTokens: number, overflow: 'refuse' | 'trim'): Transcript & { omitted: number } {
  if (estimateTurnTokens(t.turns, t.system) <= limitTokens) return { ...t, omitted: 0 };
  if (overflow === 'refuse' || t.turns.length <= 1) {
    throw contextLengthExceeded(`about ${estimateTurnTokens(t.turns, t.system)} tokens against a limit of ${limitTokens} for this model; shorten the conversation${overflow === 'refuse' ? ' (or ask the operator to set contextOverflow to trim)' : ''}`);
  }
  let turns = t.turns;
  while (turns.length > 1 && estimateTurnTokens(turns, t.system) > limitTokens) turns = turns.slice(1);
  // A conversation must not open with the answer to a dropped question.
  while (turns.length > 1 && turns[0]!.role !== 'user') turns = turns.slice(1);
  if (estimateTurnTokens(turns, t.system) > limitTokens) throw contextLengthExceeded(`the last message alone is over the limit of ${limitTokens} tokens for this model`);
  return { system: t.system, turns, omitted: t.turns.length - turns.length };
}
