import { invalidRequest } from '../errors/index.js';
import type { ChatMessage } from '../validate/index.js';
import { checkImageTotals, DEFAULT_IMAGE_LIMITS, toDocument, toImage, type Image } from './images.js';
import type { Prompt, Transcript, TranscriptPolicy, Turn } from './types.js';
import { followable, neutralise, toAssistantTurn } from './turns.js';

export { DEFAULT_IMAGE_LIMITS, fetchRemoteImages, isDocument, type Image, type ImageLimits } from './images.js';
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

/** A policy for text-only use (and the default): no images, ids as sent. */
export const TEXT_ONLY: TranscriptPolicy = { toolIdPattern: null, images: false, limits: DEFAULT_IMAGE_LIMITS };

type Content = ChatMessage['content'];

/** The `file_data` of a chat `file` part (a data URL), if it has one. */
function fileData(part: { type: string }): string | undefined {
  const data = (part as { file?: { file_data?: unknown } }).file?.file_data;
  return typeof data === 'string' ? data : undefined;
}

/**
 * Joins text parts (newline between); images, and documents (`file` parts with a PDF data URL)
 * for a CLI that takes them, are decoded and checked; other parts get a 400 naming them.
 */
function toParts(
  content: Content | undefined,
  at: string,
  policy: TranscriptPolicy,
): { text: string; images: Image[] } {
  if (content == null) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  const texts: string[] = [];
  const images: Image[] = [];
  content.forEach((part, j) => {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'refusal') texts.push(part.refusal);
    else if (part.type === 'image_url' && policy.images)
      images.push(toImage(part.image_url.url, `${at}.${j}`, policy.limits));
    else if (part.type === 'file' && policy.documents && fileData(part) !== undefined)
      images.push(toDocument(fileData(part)!, `${at}.${j}`, policy.limits));
    else {
      const why =
        part.type === 'image_url'
          ? 'images are not supported by this backend; send text'
          : part.type === 'file' && fileData(part) !== undefined
            ? `documents are not supported by this backend${policy.name ? ` (${policy.name} takes no documents)` : ''}; send the document's text`
            : `parts of type '${part.type}' are not supported by this backend; send text`;
      throw invalidRequest(`Invalid content part '${at}.${j}': ${why}.`, `${at}.${j}`, 'unsupported_content');
    }
  });
  return { text: texts.join('\n'), images };
}

function toText(content: Content | undefined, at: string, policy: TranscriptPolicy): string {
  return toParts(content, at, policy).text;
}

const PREAMBLE =
  'Below is the conversation so far between the user and you, the assistant, each turn inside its own tag. ' +
  'Write only your next reply to the last user turn, as plain text, without any tags.';

const NO_RESULT = 'No result was returned for this tool call.';

/**
 * Normalises validated OpenAI messages for one backend (docs/transcript.md): system and developer
 * text collected in order; each other message one turn; assistant tool calls without a name or
 * arguments dropped; tool results paired with their calls (orphans dropped, missing results
 * filled with a synthetic "no result" entry); tool call ids sanitised to the backend's charset.
 * Pure: it never changes its input.
 */
export function toTranscript(messages: readonly ChatMessage[], policy: TranscriptPolicy = TEXT_ONLY): Transcript {
  const system: string[] = [];
  const turns: Turn[] = [];
  const cleanId = (id: string) =>
    policy.toolIdPattern ? [...id].map((ch) => (policy.toolIdPattern!.test(ch) ? ch : '_')).join('') : id;
  /** Calls of the last assistant turn still waiting for a result, by (clean) id. */
  let open = new Map<string, string>();
  const closeOpenCalls = () => {
    for (const [id, name] of open)
      turns.push({
        role: 'tool',
        text: `<tool_result id="${neutralise(id)}" name="${neutralise(name)}">\n${NO_RESULT}\n</tool_result>`,
      });
    open = new Map();
  };
  messages.forEach((m, i) => {
    const at = `messages.${i}.content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(toText(m.content, at, policy));
        break;
      case 'user': {
        closeOpenCalls();
        const { text, images } = toParts(m.content, at, policy);
        turns.push({ role: 'user', text, ...(m.name ? { name: m.name } : {}), ...(images.length ? { images } : {}) });
        break;
      }
      case 'assistant': {
        closeOpenCalls();
        const calls = [
          ...(m.tool_calls ?? []).map((c) => ({
            id: cleanId(c.id),
            name: c.function.name,
            args: c.function.arguments,
          })),
          ...(m.function_call ? [{ id: '', name: m.function_call.name, args: m.function_call.arguments }] : []),
        ];
        const turn = toAssistantTurn([toText(m.content, at, policy), m.refusal ?? ''], calls);
        for (const call of followable(calls)) open.set(call.id || call.name, call.name);
        if (turn) turns.push(turn);
        break;
      }
      case 'tool': {
        const id = cleanId(m.tool_call_id);
        const name = open.get(id);
        if (name === undefined) break; // a result whose call is missing is dropped
        open.delete(id);
        turns.push({
          role: 'tool',
          text: `<tool_result id="${neutralise(id)}" name="${neutralise(name)}">\n${neutralise(toText(m.content, at, policy))}\n</tool_result>`,
        });
        break;
      }
      case 'function': {
        const name = open.get(m.name);
        if (name === undefined) break;
        open.delete(m.name);
        turns.push({
          role: 'tool',
          text: `<tool_result name="${neutralise(m.name)}">\n${neutralise(m.content ?? '')}\n</tool_result>`,
        });
        break;
      }
    }
  });
  closeOpenCalls();
  const images = turns.flatMap((t) => t.images ?? []);
  checkImageTotals(images, policy.limits);
  return { system: system.filter((x) => x.trim() !== '').join('\n\n') || null, turns };
}

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

/** Renders OpenAI messages into a system prompt and one stdin text (a whole conversation). */
export function toPrompt(messages: readonly ChatMessage[], policy: TranscriptPolicy = TEXT_ONLY): Prompt {
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
      : `Reply with one valid JSON value that conforms to the JSON schema named "${format.json_schema.name}" below, and nothing else: no prose, no code fences.\n${JSON.stringify(format.json_schema.schema ?? {})}`;
  return { ...prompt, system: prompt.system ? `${prompt.system}\n\n${rule}` : rule };
}
