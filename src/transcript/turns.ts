import type { Turn } from './types.js';

// One turn's text as the transcript holds it: tags a message cannot forge, and the one rendering
// of an assistant message (its text and its calls).

const TAGS = ['user', 'assistant', 'tool_call', 'tool_result', 'conversation'];
const TAG_PATTERN = new RegExp(`<(/?)(${TAGS.join('|')})\\b`, 'gi');

/** Stops message text from opening or closing the transcript's own tags (so no turn can impersonate another). */
export function neutralise(text: string): string {
  return text.replace(TAG_PATTERN, '<\u200b$1$2');
}

/** A call the model made, as an assistant turn carries it. */
export interface CallText {
  id: string;
  name: string;
  args: string;
}

/**
 * A JSON value as text with its object keys sorted: the same data, whatever order it was written
 * in, is the same text.
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Arguments as canonical JSON, when they are JSON: a client that parses a call's arguments and
 * writes them out again (spacing, escapes, key order) still sends the same call back.
 */
function canonicalArgs(args: string): string {
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args;
  }
}

/** Calls with a name and arguments: a call with neither is nothing the model can follow. */
export function followable(calls: readonly CallText[]): CallText[] {
  return calls.filter((c) => c.name.trim() !== '' && c.args.trim() !== '');
}

/**
 * An assistant turn from its text parts and its calls, or undefined when it says nothing. The one
 * rendering of an assistant message: a reply the CLI just gave (a session slot's fingerprint) and
 * the same message echoed back by the client must make the same turn.
 */
export function toAssistantTurn(texts: readonly string[], calls: readonly CallText[]): Turn | undefined {
  const parts = texts.filter((x) => x !== '').map(neutralise);
  const keys = [...parts];
  for (const call of followable(calls)) {
    const open = `<tool_call${call.id ? ` id="${neutralise(call.id)}"` : ''} name="${neutralise(call.name)}">`;
    const args = neutralise(canonicalArgs(call.args));
    parts.push(`${open}\n${args}\n</tool_call>`);
    // A call with an id is that call, whatever its arguments look like when the client sends it
    // back (Claude Code writes Edit's back with `replace_all: false` added).
    keys.push(call.id ? `${open}</tool_call>` : `${open}\n${args}\n</tool_call>`);
  }
  if (parts.length === 0) return undefined;
  const text = parts.join('\n');
  const key = keys.join('\n');
  return { role: 'assistant', text, ...(key !== text ? { key } : {}) };
}
