import type { Message } from '../core/index.js';
import { TEXT_ONLY, toTranscript } from './from-messages.js';
import type { Prompt, TranscriptPolicy, Turn } from './types.js';
import { neutralise } from './turns.js';

export { TEXT_ONLY, toTranscript } from './from-messages.js';
export {
  DEFAULT_IMAGE_LIMITS,
  fetchRemoteImages,
  isDocument,
  isRemote,
  type Image,
  type ImageLimits,
} from './images.js';
export {
  charsToTokens,
  DEFAULT_CHARS_PER_TOKEN,
  estimateTurnTokens,
  fitContext,
  IMAGE_TOKENS,
  imageCount,
  transcriptChars,
  TRIM_FRACTION,
  tryFitContext,
  type Fitted,
} from './policy.js';
export { createTokenCalibration, type TokenCalibration, type TokenObservation } from './calibration.js';
export { createFenceStripper, type FenceStripper } from './fences.js';
export type { Prompt, Transcript, TranscriptPolicy, Turn } from './types.js';
export { canonicalJson, toAssistantTurn, type CallText } from './turns.js';

const PREAMBLE =
  'Below is the conversation so far between the user and you, the assistant, each turn inside its own tag. ' +
  'Write only your next reply to the last user turn, as plain text, without any tags.';

/**
 * The stdin text for a list of turns, in the transcript format of docs/transcript.md: a lone user
 * turn (or a run of user turns) is sent verbatim, anything else is wrapped in per-turn tags.
 */
export function renderTurns(turns: readonly Turn[], omitted = 0): string {
  if (omitted === 0 && turns.length > 0 && turns.every((t) => t.role === 'user' && !t.name))
    return turns.map((t) => t.text).join('\n\n');

  const body = turns.map((t) => {
    if (t.role === 'user')
      return `<user${t.name ? ` name="${neutralise(t.name)}"` : ''}>\n${neutralise(t.text)}\n</user>`;
    if (t.role === 'assistant') return `<assistant>\n${t.text}\n</assistant>`;
    return t.text; // tool results carry their own tag
  });
  const last = turns[turns.length - 1];
  const tail =
    (omitted > 0
      ? `\n\nThe ${omitted} earliest turn(s) of this conversation were left out to fit the model's context.`
      : '') +
    (last?.role === 'assistant'
      ? '\n\nYour last reply above was cut off: continue it exactly where it stops, without repeating it.'
      : '');
  return `${PREAMBLE}${tail}\n\n<conversation>\n${body.join('\n\n')}\n</conversation>`;
}

/** The prompt for a list of turns: rendered text plus the images those turns carry. */
export function toPromptOf(system: string | null, turns: readonly Turn[], omitted = 0): Prompt {
  const images = turns.flatMap((t) => t.images ?? []);
  return { system, text: renderTurns(turns, omitted), ...(images.length ? { images } : {}) };
}

/** Renders the core's messages into a system prompt and one stdin text (a whole conversation). */
export function toPrompt(messages: readonly Message[], policy: TranscriptPolicy = TEXT_ONLY): Prompt {
  const t = toTranscript(messages, policy);
  return toPromptOf(t.system, t.turns);
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; description?: string } };

/** The schema a CLI enforces itself (claude's structured output tool, codex's `--output-schema`). */
export function outputSchemaOf(format: ResponseFormat | undefined): Record<string, unknown> | undefined {
  return format?.type === 'json_schema' ? format.json_schema.schema : undefined;
}

/** Whether the reply is to be JSON (its code fences are taken off). */
export function isJsonFormat(format: ResponseFormat | undefined): boolean {
  return format?.type === 'json_object' || format?.type === 'json_schema';
}

/**
 * JSON mode, and a schema the CLIs are not given (none was sent), become an instruction appended
 * to the system prompt; a schema is enforced by the CLI instead (see `outputSchemaOf`).
 */
export function withResponseFormat(prompt: Prompt, format: ResponseFormat | undefined): Prompt {
  if (!format || format.type === 'text' || outputSchemaOf(format)) return prompt;
  const rule =
    format.type === 'json_object'
      ? 'Reply with one valid JSON object and nothing else: no prose, no code fences.'
      : `Reply with one valid JSON value that conforms to the JSON schema named "${format.json_schema.name}" ` +
        `below, and nothing else: no prose, no code fences.\n${JSON.stringify(format.json_schema.schema ?? {})}`;
  return { ...prompt, system: prompt.system ? `${prompt.system}\n\n${rule}` : rule };
}
