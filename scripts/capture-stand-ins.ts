// The recording side of scripts/capture-agent-sessions.ts: a loopback HTTP server that keeps every
// request as it came (method, path with query, headers in their sent case, JSON body), the writers
// of a Messages and a Responses answer, and the neutralising of a record for a fixture (temp paths
// and the key replaced, long strings cut).
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from '../test/support/listen.js';

export interface Recorded {
  /** 1-based, in arrival order. */
  n: number;
  method: string;
  /** Path with its query. */
  url: string;
  /** Header names as the client spelled them. */
  headers: Record<string, string>;
  /** The parsed JSON body; the raw text when it is not JSON; null when empty. */
  body: unknown;
  /** How the stand-in read the request and what it answered (filled in by the answerer). */
  answer?: Record<string, unknown>;
}

export type Answerer = (rec: Recorded, res: ServerResponse) => void | Promise<void>;

export interface Recorder {
  url: string;
  seen: Recorded[];
  close(): Promise<void>;
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    out[name] = name in out ? `${out[name]}, ${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1]!;
  }
  return out;
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Listens on loopback; records each request before `answer` replies to it. */
export async function startRecorder(answer: Answerer): Promise<Recorder> {
  const seen: Recorded[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rec: Recorded = {
      n: seen.length + 1,
      method: req.method ?? '',
      url: req.url ?? '',
      headers: headersOf(req),
      body: parseBody(Buffer.concat(chunks).toString('utf8')),
    };
    seen.push(rec);
    try {
      await answer(rec, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    }
  });
  const { url, close } = await listenLoopback(server);
  return { url, seen, close };
}

// --- answers --------------------------------------------------------------------------------

/** A Messages content block the stand-in answers with. */
export type AnthropicBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

const USAGE = { input_tokens: 1000, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** The SSE events of one block: its start, its deltas, its stop. */
function blockEvents(index: number, b: AnthropicBlock): Record<string, unknown>[] {
  const stop = { type: 'content_block_stop', index };
  switch (b.type) {
    case 'thinking':
      return [
        { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
        { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } },
        { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } },
        stop,
      ];
    case 'text':
      return [
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } },
        stop,
      ];
    case 'tool_use':
      return [
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
        },
        stop,
      ];
  }
}

/** Answers a Messages request with these blocks, streamed or as one JSON message as it asked. */
export function writeMessage(
  res: ServerResponse,
  o: { id: string; model: string; stream: boolean; blocks: AnthropicBlock[] },
): void {
  const stopReason = o.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const message = { id: o.id, type: 'message', role: 'assistant', model: o.model };
  if (!o.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${o.id}` });
    res.end(
      JSON.stringify({ ...message, content: o.blocks, stop_reason: stopReason, stop_sequence: null, usage: USAGE }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_${o.id}` });
  const events = [
    {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: USAGE },
    },
    ...o.blocks.flatMap((b, i) => blockEvents(i, b)),
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } },
    { type: 'message_stop' },
  ];
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

/** Answers a Responses request with these output items (each sent as added, then done), streamed. */
export function writeResponse(res: ServerResponse, o: { id: string; model: string; items: Record<string, unknown>[] }) {
  const usage = {
    input_tokens: 1000,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 5 },
    total_tokens: 1020,
  };
  const response = { id: o.id, object: 'response', model: o.model, status: 'in_progress', output: [] };
  const events = [
    { type: 'response.created', response },
    ...o.items.flatMap((item, output_index) => [
      { type: 'response.output_item.added', output_index, item },
      { type: 'response.output_item.done', output_index, item },
    ]),
    { type: 'response.completed', response: { ...response, status: 'completed', output: o.items, usage } },
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [sequence_number, e] of events.entries())
    res.write(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number })}\n\n`);
  res.end();
}

// --- fixtures -------------------------------------------------------------------------------

/**
 * Strings longer than `longest` are cut to their first `keep` characters and marked with their
 * whole length: tighter in the system prompt and tool definitions, looser inside the conversation
 * (`messages`, `input`) so system-reminders and tool results show what they are, and in headers and
 * codex's `client_metadata` (its turn metadata, a JSON string of some 800 characters, stays whole).
 */
export interface Cut {
  longest: number;
  keep: number;
}

const CUT: Cut = { longest: 600, keep: 400 };
const LOOSE: Cut = { longest: 2000, keep: 1500 };
const LOOSE_KEYS = ['messages', 'input', 'headers', 'client_metadata'];

/** `[text, stand-in]` pairs replaced in every string of a record. */
export type Replacements = [string, string][];

/**
 * The replacements for a run under `tmp` with `key`: the temp dir (also as claude spells it in its
 * projects/ folder names, every `/` and `.` a `-`) becomes <tmp>, the key <key>.
 */
export function replacementsFor(tmp: string, key: string): Replacements {
  return [
    [tmp, '<tmp>'],
    [tmp.replace(/[/.]/g, '-'), '<tmp>'],
    [key, '<key>'],
  ];
}

/** A copy with the replacements made in every string and long strings cut (none with `cut` null). */
export function neutralise(value: unknown, swap: Replacements, cut: Cut | null = CUT): unknown {
  if (typeof value === 'string') {
    const s = swap.reduce((acc, [from, to]) => acc.split(from).join(to), value);
    return cut && s.length > cut.longest ? `${s.slice(0, cut.keep)}…[${s.length} chars]` : s;
  }
  if (Array.isArray(value)) return value.map((v) => neutralise(v, swap, cut));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, neutralise(v, swap, cut && LOOSE_KEYS.includes(k) ? LOOSE : cut)]),
    );
  return value;
}

/** Writes the records as JSON lines, neutralised (`whole`: no string cut). */
export function writeSession(path: string, seen: Recorded[], swap: Replacements, whole = false): void {
  const lines = seen.map((r) => JSON.stringify(neutralise(r, swap, whole ? null : CUT)));
  writeFileSync(path, `${lines.join('\n')}\n`);
}
