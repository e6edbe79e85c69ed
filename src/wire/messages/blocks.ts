import type { Message, Part, TextPart } from '../../core/index.js';
import { invalidRequest } from '../../errors/index.js';
import { DROPPED_BLOCKS, type AnthropicMessage, type Block } from './schema.js';

// A Messages request's blocks as the core's parts, one message each: each part that a 400 can be
// about keeps the block's own path (`messages.2.content.1`).

type ImageBlock = Extract<Block, { type: 'image' }>;
type ToolResultBlock = Extract<Block, { type: 'tool_result' }>;

const DROPPED: ReadonlySet<string> = new Set(DROPPED_BLOCKS);

/** An image block as an image part: a base64 source as a data URL, a url source the URL itself. */
function toImagePart(b: ImageBlock, at: string): Part {
  const s = b.source;
  if (s.type === 'base64') return { type: 'image', url: `data:${s.media_type};base64,${s.data}`, at };
  if (s.type === 'url') return { type: 'image', url: s.url, at };
  throw invalidRequest(
    `Invalid value for '${at}.source': olp takes images as base64 or URL sources; ` +
      "Files API images ('file') are not supported.",
    `${at}.source`,
    'unsupported_content',
  );
}

/**
 * A `document` block: plain text (a `text` or `content` source, or base64 `text/plain`) as text; a
 * base64 PDF as a document part (the transcript checks it, and only the claude CLI is given it);
 * any other source is refused naming the block.
 */
function toDocumentPart(b: Extract<Block, { type: 'document' }>, at: string): Part {
  const s = b.source as { type: string; media_type?: unknown; data?: unknown; content?: unknown };
  if (s.type === 'text' && typeof s.data === 'string') return { type: 'text', text: s.data };
  if (s.type === 'content' && Array.isArray(s.content))
    return {
      type: 'text',
      text: s.content.map((c: { text?: unknown }) => (typeof c?.text === 'string' ? c.text : '')).join('\n'),
    };
  if (s.type === 'base64' && typeof s.data === 'string') {
    if (s.media_type === 'text/plain') return { type: 'text', text: Buffer.from(s.data, 'base64').toString('utf8') };
    if (s.media_type === 'application/pdf')
      return { type: 'document', url: `data:application/pdf;base64,${s.data}`, at };
  }
  const media = typeof s.media_type === 'string' ? ` (${s.media_type.slice(0, 60)})` : '';
  const source = `'${String(s.type).slice(0, 40)}'${media}`;
  throw invalidRequest(
    `Invalid content block '${at}': 'document' blocks of source type ${source} are not supported; ` +
      'olp takes a base64 PDF, or plain text.',
    at,
    'unsupported_content',
  );
}

/**
 * A `tool_result` block: the result (its text blocks on their own lines, a `tool_reference` as
 * words), then the images it carries, each after a line saying whose they are (a result holds text only).
 */
function fromToolResult(b: ToolResultBlock, at: string): Part[] {
  const blocks = typeof b.content === 'string' ? [{ type: 'text' as const, text: b.content }] : (b.content ?? []);
  const content = blocks
    .flatMap((c) =>
      c.type === 'text' ? [c.text] : c.type === 'tool_reference' ? [`(tool ${c.tool_name} is available)`] : [],
    )
    .join('\n');
  return [
    { type: 'tool_result', callId: b.tool_use_id, content, ...(b.is_error ? { isError: true } : {}) },
    ...blocks.flatMap((c, k): Part[] =>
      c.type === 'image'
        ? [
            { type: 'text', text: `(an image returned by tool call ${b.tool_use_id})` },
            toImagePart(c, `${at}.content.${k}`),
          ]
        : [],
    ),
  ];
}

/** A user message's blocks as parts, in order; none (every block left out): no message. */
export function fromUser(m: AnthropicMessage, at: string): Message | undefined {
  if (typeof m.content === 'string') return { role: 'user', parts: [{ type: 'text', text: m.content }] };
  const parts: Part[] = [];
  m.content.forEach((b, j) => {
    const here = `${at}.content.${j}`;
    if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image') parts.push(toImagePart(b, here));
    else if (b.type === 'document') parts.push(toDocumentPart(b, here));
    else if (b.type === 'tool_result') parts.push(...fromToolResult(b, here));
    else if (b.type === 'tool_use')
      throw invalidRequest(`Invalid content block '${here}': 'tool_use' blocks belong to assistant messages.`, here);
  });
  return parts.length > 0 ? { role: 'user', parts } : undefined;
}

/** A `thinking` block as reasoning (its text and signature, read as far as they are strings). */
function toReasoning(b: Block): Part {
  const { thinking, signature } = b as { thinking?: unknown; signature?: unknown };
  return {
    type: 'reasoning',
    text: typeof thinking === 'string' ? thinking : '',
    ...(typeof signature === 'string' ? { signature } : {}),
  };
}

/**
 * An assistant message: its text blocks as one text (joined as they are: one reply's text, as the
 * CLI gave it, so a reply echoed back matches its session's fingerprint), its `tool_use` blocks as
 * calls, its `thinking` as reasoning; redacted thinking and server tool blocks are left out.
 */
export function fromAssistant(m: AnthropicMessage, at: string): Message | undefined {
  if (typeof m.content === 'string')
    return m.content ? { role: 'assistant', parts: [{ type: 'text', text: m.content }] } : undefined;
  const parts: Part[] = [];
  let text: TextPart | undefined;
  m.content.forEach((b, j) => {
    if (b.type === 'text') {
      if (text) text.text += b.text;
      else parts.push((text = { type: 'text', text: b.text }));
    } else if (b.type === 'tool_use')
      parts.push({ type: 'tool_call', id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
    else if (b.type === 'thinking') parts.push(toReasoning(b));
    else if (!DROPPED.has(b.type))
      throw invalidRequest(
        `Invalid content block '${at}.content.${j}': an assistant message takes 'text', 'tool_use' and ` +
          `'thinking' blocks, not '${b.type}'.`,
        `${at}.content.${j}`,
      );
  });
  const said = parts.filter((p) => p.type !== 'text' || p.text !== '');
  return said.length > 0 ? { role: 'assistant', parts: said } : undefined;
}
