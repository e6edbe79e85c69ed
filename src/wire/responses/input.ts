import type { Message } from '../../core/index.js';
import { invalidRequest, responseNotFound } from '../../errors/index.js';
import type { Store } from '../../store/index.js';
import { describeType } from '../../errors/index.js';
import { checkCallOutputs, type ParsedResponsesRequest } from './request.js';
import { callOfItem } from './stored-calls.js';
import { fromStoredMessages } from './stored-messages.js';

// What a Responses request's input stands for: the stored chain behind previous_response_id, and
// item_reference items replaced by the stored items they name.

/**
 * The whole conversation for this request: the stored chain behind `previous_response_id` (its
 * inputs and replies), then this input. The session pool resumes the CLI session that saw that
 * history, so only the new input reaches the CLI; if the session is gone it runs fresh.
 */
export function toMessages(store: Store, keyId: string, p: ParsedResponsesRequest): Message[] {
  const instructions = p.body.instructions;
  const system: Message[] = instructions ? [{ role: 'system', parts: [{ type: 'text', text: instructions }] }] : [];
  const previous = p.body.previous_response_id;
  if (!previous) {
    checkCallOutputs(p.items, new Set());
    return [...system, ...p.messages];
  }
  // A response belongs to the key that made it: any other key is told it does not exist.
  const chain = store.responses.chain(keyId, previous);
  if (chain.length === 0) throw responseNotFound(previous, 'previous_response_id');
  const history = chain.flatMap((r) => [...fromStoredMessages(r.messages), ...toAssistant(r.outputText, r.toolCalls)]);
  checkCallOutputs(
    p.items,
    new Set(history.flatMap((m) => m.parts.flatMap((c) => (c.type === 'tool_call' ? [c.id] : [])))),
  );
  return [...system, ...history, ...p.messages];
}

/** A stored reply as the assistant message it was: its text, and the calls of its output items. */
function toAssistant(text: string, items: readonly Record<string, unknown>[]): Message[] {
  const calls = items.flatMap((o) => callOfItem(o) ?? []);
  if (!text && calls.length === 0) return [];
  return [
    {
      role: 'assistant',
      parts: [
        ...(text ? [{ type: 'text' as const, text }] : []),
        ...calls.map((c) => ({ type: 'tool_call' as const, id: c.id, name: c.name, arguments: c.arguments })),
      ],
    },
  ];
}

/** The most `item_reference` items one request may carry (a conversation of thousands of turns). */
export const MAX_ITEM_REFERENCES = 10_000;

/**
 * `item_reference` input items (the Vercel AI SDK sends them for earlier output when it stores
 * responses) replaced by the items they name, from this key's stored responses: one indexed
 * look-up for all of them. What they expand to is bounded like a body (`--body-limit`), so a
 * short request cannot make olp handle more than a long one could.
 */
export function resolveReferences(store: Store, keyId: string, body: unknown, limitBytes: number): unknown {
  const input = (body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return body;
  const ids: string[] = [];
  input.forEach((entry, i) => {
    const ref = entry as { type?: unknown; id?: unknown } | null;
    if (ref?.type !== 'item_reference') return;
    if (typeof ref.id !== 'string')
      throw invalidRequest(
        `Invalid type for 'input.${i}.id': expected a string, but got ${describeType(ref.id)} instead.`,
        `input.${i}.id`,
      );
    ids.push(ref.id);
  });
  if (ids.length === 0) return body;
  if (ids.length > MAX_ITEM_REFERENCES) {
    throw invalidRequest(
      `Invalid value for 'input': at most ${MAX_ITEM_REFERENCES} items of type 'item_reference' per request, ` +
        `got ${ids.length}.`,
      'input',
    );
  }
  const found = store.responses.items(keyId, ids);
  let bytes = 0;
  const resolved = input.map((entry, i) => {
    const ref = entry as { type?: unknown; id?: unknown } | null;
    if (ref?.type !== 'item_reference') return entry;
    const hit = found.get(ref.id as string);
    if (!hit) throw invalidRequest(`Item with id '${String(ref.id).slice(0, 80)}' not found.`, `input.${i}.id`);
    bytes += hit.bytes;
    if (bytes > limitBytes)
      throw invalidRequest(
        `Invalid value for 'input': the items it references add up to more than ${limitBytes} bytes (olp's ` +
          `--body-limit).`,
        'input',
      );
    if (hit.item.type === 'message') return { type: 'message', role: 'assistant', content: hit.item.content };
    return hit.item;
  });
  return { ...(body as Record<string, unknown>), input: resolved };
}
