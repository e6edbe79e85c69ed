import { invalidRequest } from '../errors/index.js';
import type { ChatMessage } from '../validate/index.js';

/** What a backend sends: the system prompt (every invocation) and the user-turn text for stdin. */
export interface Prompt {
  system: string | null;
  text: string;
}

const TAGS = ['user', 'assistant', 'tool_call', 'tool_result', 'conversation'];
const TAG_PATTERN = new RegExp(`<(/?)(${TAGS.join('|')})\\b`, 'gi');

/** Stops message text from opening or closing the transcript's own tags (so no turn can impersonate another). */
function neutralise(text: string): string {
  return text.replace(TAG_PATTERN, '<\u200b$1$2');
}

type Content = ChatMessage['content'];

/** Joins text parts; other part types are refused with a 400 naming the part. */
function toText(content: Content | undefined, at: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      throw invalidRequest(
        `Invalid content part '${at}.${j}': parts of type '${part.type}' are not supported by this backend; send text.`,
        `${at}.${j}`,
        'unsupported_content',
      );
    })
    .join('\n');
}

const PREAMBLE =
  'Below is the conversation so far between the user and you, the assistant, each turn inside its own tag. ' +
  'Write only your next reply to the last user turn, as plain text, without any tags.';

/** One conversation turn after normalisation: what fingerprints and rendering both work on. */
export interface Turn {
  role: 'user' | 'assistant' | 'tool';
  text: string;
}

export interface Transcript {
  system: string | null;
  turns: Turn[];
}

/** Normalises OpenAI messages: system/developer text collected, each other message one turn. */
export function toTranscript(messages: readonly ChatMessage[]): Transcript {
  const system: string[] = [];
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    const at = `messages.${i}.content`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(toText(m.content, at));
        break;
      case 'user':
        turns.push({ role: 'user', text: toText(m.content, at) });
        break;
      case 'assistant': {
        const parts = [toText(m.content, at), m.refusal ?? ''].filter((s) => s !== '').map(neutralise);
        for (const call of m.tool_calls ?? []) {
          parts.push(`<tool_call id="${neutralise(call.id)}" name="${neutralise(call.function.name)}">\n${neutralise(call.function.arguments)}\n</tool_call>`);
        }
        if (m.function_call) parts.push(`<tool_call name="${neutralise(m.function_call.name)}">\n${neutralise(m.function_call.arguments)}\n</tool_call>`);
        turns.push({ role: 'assistant', text: parts.join('\n') });
        break;
      }
      case 'tool':
        turns.push({ role: 'tool', text: `<tool_result id="${neutralise(m.tool_call_id)}">\n${neutralise(toText(m.content, at))}\n</tool_result>` });
        break;
      case 'function':
        turns.push({ role: 'tool', text: `<tool_result name="${neutralise(m.name)}">\n${neutralise(m.content ?? '')}\n</tool_result>` });
        break;
    }
  });

  return { system: system.filter((s) => s.trim() !== '').join('\n\n') || null, turns };
}

/**
 * The stdin text for a list of turns, in the transcript format of docs/transcript.md: a lone user
 * turn (or a run of user turns) is sent verbatim, anything else is wrapped in per-turn tags.
 */
export function renderTurns(turns: readonly Turn[]): string {
  if (turns.length > 0 && turns.every((t) => t.role === 'user')) return turns.map((t) => t.text).join('\n\n');

  const body = turns.map((t) => {
    if (t.role === 'user') return `<user>\n${neutralise(t.text)}\n</user>`;
    if (t.role === 'assistant') return `<assistant>\n${t.text}\n</assistant>`;
    return t.text; // tool results carry their own tag
  });
  const last = turns[turns.length - 1];
  const tail =
    last?.role === 'assistant'
      ? '\n\nYour last reply above was cut off: continue it exactly where it stops, without repeating it.'
      : '';
  return `${PREAMBLE}${tail}\n\n<conversation>\n${body.join('\n\n')}\n</conversation>`;
}

/** Renders OpenAI messages into a system prompt and one stdin text (a whole conversation). */
export function toPrompt(messages: readonly ChatMessage[]): Prompt {
  const t = toTranscript(messages);
  return { system: t.system, text: renderTurns(t.turns) };
}

type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; description?: string } };

/** JSON modes have no CLI flag; they become an instruction appended to the system prompt. */
export function withResponseFormat(prompt: Prompt, format: ResponseFormat | undefined): Prompt {
  if (!format || format.type === 'text') return prompt;
  const rule =
    format.type === 'json_object'
      ? 'Reply with one valid JSON object and nothing else: no prose, no code fences.'
      : `Reply with one valid JSON value that conforms to the JSON schema named "${format.json_schema.name}" below, and nothing else: no prose, no code fences.\n${JSON.stringify(format.json_schema.schema ?? {})}`;
  return { ...prompt, system: prompt.system ? `${prompt.system}\n\n${rule}` : rule };
}
