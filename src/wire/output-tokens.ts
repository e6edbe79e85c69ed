import { z } from 'zod';
import { invalidRequest } from '../errors/index.js';

/**
 * The largest reply cap a request may ask for on any model: the most output tokens any model
 * olp lists writes (128K: Anthropic's 4.6 models on, OpenAI's GPT-5 family). A model the table
 * does not list (an id passed through to its CLI) is held to it too.
 */
export const OUTPUT_TOKENS_CEILING = 128_000;

/**
 * A reply's token cap (`max_tokens`, `max_completion_tokens`, `max_output_tokens`): an integer
 * from `min` to the ceiling.
 */
export function outputTokens(min = 1) {
  return z
    .number()
    .int()
    .min(min)
    .max(OUTPUT_TOKENS_CEILING, `expected at most ${OUTPUT_TOKENS_CEILING} (the most output tokens any model writes)`);
}

/**
 * A reply cap over what the request's model writes (`cap`: the model table's; none for an id it
 * does not list, which the schema held to the ceiling): 400 naming the field, as Anthropic and
 * OpenAI refuse it, rather than a CLI that fails on it later.
 */
export function checkOutputTokens(
  value: number | null | undefined,
  param: string,
  model: string,
  cap: number | undefined,
): void {
  if (value == null || cap === undefined || value <= cap) return;
  throw invalidRequest(
    `Invalid value for '${param}': ${value} is more than ${model} writes (${cap} output tokens at most).`,
    param,
  );
}
