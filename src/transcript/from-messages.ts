import { textsOf, toolResultText, type Message, type Part, type ToolResultPart } from '../core/index.js';
import { invalidRequest } from '../errors/index.js';
import { checkImageTotals, DEFAULT_IMAGE_LIMITS, toDocument, toImage, type Image } from './images.js';
import type { Transcript, TranscriptPolicy, Turn } from './types.js';
import { followable, neutralise, toAssistantTurn, type CallText } from './turns.js';

/** A policy for text-only use (and the default): no images, ids as sent. */
export const TEXT_ONLY: TranscriptPolicy = { toolIdPattern: null, images: false, limits: DEFAULT_IMAGE_LIMITS };

/** Why a part cannot be sent to this backend, for the 400 that names it. */
function refusal(part: Part, policy: TranscriptPolicy): string {
  if (part.type === 'image') return 'images are not supported by this backend; send text';
  const cli = policy.name ? ` (${policy.name} takes no documents)` : '';
  if (part.type === 'document') return `documents are not supported by this backend${cli}; send the document's text`;
  const kind = part.type === 'other' ? part.kind : part.type;
  return `parts of type '${kind}' are not supported by this backend; send text`;
}

/**
 * Joins text parts (newline between); images, and documents for a CLI that takes them, are decoded
 * and checked; a part no CLI takes gets a 400 naming it. Calls, results and reasoning are not text.
 */
export function toParts(parts: readonly Part[], policy: TranscriptPolicy): { text: string; images: Image[] } {
  const texts: string[] = [];
  const images: Image[] = [];
  for (const part of parts) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'image' && policy.images) images.push(toImage(part.url, part.at, policy.limits));
    else if (part.type === 'document' && policy.documents) images.push(toDocument(part.url, part.at, policy.limits));
    else if (part.type === 'image' || part.type === 'document' || part.type === 'other') {
      const why = refusal(part, policy);
      throw invalidRequest(`Invalid content part '${part.at}': ${why}.`, part.at, 'unsupported_content');
    }
  }
  return { text: texts.join('\n'), images };
}

const NO_RESULT = 'No result was returned for this tool call.';

/** A transcript being made: the system text, the turns so far, and the last assistant turn's calls awaiting results. */
interface Draft {
  policy: TranscriptPolicy;
  system: string[];
  turns: Turn[];
  /** Calls of the last assistant turn still waiting for a result, by (clean) id, or name for a call without one. */
  open: Map<string, string>;
}

/** A tool call id within the backend's charset (others become `_`). */
function cleanId(id: string, policy: TranscriptPolicy): string {
  const pattern = policy.toolIdPattern;
  return pattern ? [...id].map((ch) => (pattern.test(ch) ? ch : '_')).join('') : id;
}

/** The calls still open get a synthetic "no result" each: the conversation moved on without them. */
function closeOpenCalls(d: Draft): void {
  for (const [id, name] of d.open)
    d.turns.push({
      role: 'tool',
      text: `<tool_result id="${neutralise(id)}" name="${neutralise(name)}">\n${NO_RESULT}\n</tool_result>`,
    });
  d.open = new Map();
}

/** A result of an open call is its turn; one whose call is missing is dropped. */
function addResult(d: Draft, r: ToolResultPart): void {
  const text = neutralise(toolResultText(r));
  if (r.name !== undefined) {
    // Chat's legacy `function` message: it answers a call by the function's name.
    if (!d.open.has(r.name)) return;
    d.open.delete(r.name);
    d.turns.push({ role: 'tool', text: `<tool_result name="${neutralise(r.name)}">\n${text}\n</tool_result>` });
    return;
  }
  const id = cleanId(r.callId, d.policy);
  const name = d.open.get(id);
  if (name === undefined) return;
  d.open.delete(id);
  const tag = `<tool_result id="${neutralise(id)}" name="${neutralise(name)}">`;
  d.turns.push({ role: 'tool', text: `${tag}\n${text}\n</tool_result>` });
}

/** A user message: its tool results first, each its own turn, then its other parts as the user's turn. */
function addUser(d: Draft, m: Message): void {
  const results = m.parts.filter((p): p is ToolResultPart => p.type === 'tool_result');
  for (const r of results) addResult(d, r);
  const rest = m.parts.filter((p) => p.type !== 'tool_result');
  if (results.length > 0 && rest.length === 0) return;
  closeOpenCalls(d);
  const { text, images } = toParts(rest, d.policy);
  d.turns.push({ role: 'user', text, ...(m.name ? { name: m.name } : {}), ...(images.length ? { images } : {}) });
}

/** An assistant message: its text and calls one turn; its calls await their results. Reasoning alone is no turn. */
function addAssistant(d: Draft, m: Message): void {
  const calls: CallText[] = m.parts.flatMap((p) =>
    p.type === 'tool_call' ? [{ id: cleanId(p.id, d.policy), name: p.name, args: p.arguments }] : [],
  );
  if (calls.length === 0 && !m.parts.some((p) => p.type === 'text')) return;
  closeOpenCalls(d);
  const turn = toAssistantTurn(textsOf(m), calls);
  for (const call of followable(calls)) d.open.set(call.id || call.name, call.name);
  if (turn) d.turns.push(turn);
}

/**
 * Normalises the core's messages for one backend (docs/transcript.md): system text collected in
 * order; each other message one turn (a user message's tool results each their own); assistant
 * tool calls without a name or arguments dropped; tool results paired with their calls (orphans
 * dropped, missing results filled with a synthetic "no result" entry); tool call ids sanitised to
 * the backend's charset. Pure: it never changes its input.
 */
export function toTranscript(messages: readonly Message[], policy: TranscriptPolicy = TEXT_ONLY): Transcript {
  const d: Draft = { policy, system: [], turns: [], open: new Map() };
  for (const m of messages) {
    if (m.role === 'system') d.system.push(toParts(m.parts, policy).text);
    else if (m.role === 'user') addUser(d, m);
    else addAssistant(d, m);
  }
  closeOpenCalls(d);
  checkImageTotals(
    d.turns.flatMap((t) => t.images ?? []),
    policy.limits,
  );
  return { system: d.system.filter((x) => x.trim() !== '').join('\n\n') || null, turns: d.turns };
}
