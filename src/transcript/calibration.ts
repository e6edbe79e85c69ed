import { DEFAULT_CHARS_PER_TOKEN } from './policy.js';

/** Below this many characters a turn's count says more about the CLI's own overhead than about the text. */
const MIN_CHARS = 20_000;
/** Rates outside this range are taken as a measuring error (a CLI that summed several calls, say). */
const MIN_RATE = 0.5;
const MAX_RATE = 8;

/** One turn's measurement: the conversation's characters and the prompt tokens the provider reported for it. */
export interface TokenObservation {
  chars: number;
  tokens: number;
  /**
   * The CLI was sent this conversation whole (a fresh or ephemeral turn): the count is exact. A
   * turn the CLI continued from its own session counts what the CLI holds, which it may have
   * compacted: the count is a floor, and may only make the estimate more careful.
   */
  whole: boolean;
}

/**
 * Characters per token as the provider counts them, learnt per key, backend and model from the
 * prompt tokens each turn reports (olp's default, four a token, holds until then). A measurement
 * of a whole conversation replaces the rate; one of a continued session only lowers it (more
 * tokens per character), since compaction can only have made that count smaller. In memory: a
 * restarted daemon learns again from its first turns.
 */
export function createTokenCalibration() {
  const rates = new Map<string, number>();
  const id = (keyId: string, backend: string, model: string) => `${keyId}\u0000${backend}\u0000${model}`;
  return {
    /** The rate to estimate with for this key, backend and model. */
    charsPerToken(keyId: string, backend: string, model: string): number {
      return rates.get(id(keyId, backend, model)) ?? DEFAULT_CHARS_PER_TOKEN;
    },
    /** Learns from one finished turn. */
    observe(keyId: string, backend: string, model: string, o: TokenObservation): void {
      if (o.chars < MIN_CHARS || o.tokens <= 0) return;
      const rate = o.chars / o.tokens;
      if (rate < MIN_RATE || rate > MAX_RATE) return;
      const k = id(keyId, backend, model);
      const current = rates.get(k);
      if (o.whole || current === undefined) rates.set(k, o.whole ? rate : Math.min(rate, DEFAULT_CHARS_PER_TOKEN));
      else if (rate < current) rates.set(k, rate);
    },
  };
}

export type TokenCalibration = ReturnType<typeof createTokenCalibration>;
