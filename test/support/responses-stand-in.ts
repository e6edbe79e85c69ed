// A small stand-in for the OpenAI Responses API on loopback, so the real `codex` binary can run
// end to end with a dummy key (`-c openai_base_url=…`, CODEX_API_KEY) and nothing leaving the machine.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpServer } from '../../src/http/index.js';
import { endsWithToolResult } from './anthropic-stand-in.js';
import { listenLoopback } from './listen.js';

export type ResponsesMode = 'text' | '401' | '429' | '500';

export interface ResponsesStandIn {
  url: string;
  /** JSON bodies of every POST /v1/responses. */
  requests: {
    input?: unknown;
    instructions?: string;
    model?: string;
    tools?: unknown[];
    text?: { format?: Record<string, unknown> };
    reasoning?: { effort?: string; summary?: string };
  }[];
  mode: ResponsesMode;
  /** Simulated provider time before a reply starts (ms; default 0). */
  latencyMs: number;
  /**
   * When set and olp's MCP tools are offered (the `mcp__olp` namespace, in `tools` or in an
   * `additional_tools` input item) and the input ends with a user message (a new user turn, with
   * earlier rounds in the history or not): the reply is these function calls. A request whose
   * last user message is followed by outputs (or whose rendered prompt ends with a result) is
   * answered with their texts.
   */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[] | undefined;
  /**
   * Stream a text reply as the API does (`response.output_text.delta` pieces of 6 characters
   * between the message's `output_item.added` and `output_item.done`), not as one finished item.
   */
  deltas?: boolean;
  /** With `deltas`: this long between text deltas (ms; default 0), so a reply can be stopped mid-stream. */
  deltaMs?: number;
  /**
   * Cuts the next `times` text replies after `afterDeltas` text deltas (each cut counts one down;
   * implies `deltas`): `reset` destroys the connection, `malformed` sends an event whose data is
   * not JSON and ends the response. `text`, when set, is the cut reply's text (else the real one).
   * With `afterDeltas` past the text's last piece the cut comes after the message is done and
   * before `response.completed`.
   */
  cut?: { how: 'reset' | 'malformed'; afterDeltas: number; times: number; text?: string } | undefined;
  /**
   * When set, a reply (not of calls) starts with a reasoning item whose summary is this text,
   * streamed as the API streams a summary (part added, text deltas, done).
   */
  reasoning?: string | undefined;
  close(): Promise<void>;
}

/** The events of a reasoning item with a one-part summary, at output index 0. */
function reasoningEvents(n: number, summary: string): Record<string, unknown>[] {
  const id = `rs_${n}`;
  const at = { item_id: id, output_index: 0, summary_index: 0 };
  const done = { type: 'summary_text', text: summary };
  return [
    { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id, summary: [] } },
    { type: 'response.reasoning_summary_part.added', ...at, part: { type: 'summary_text', text: '' } },
    ...(summary.match(/.{1,6}/gs) ?? []).map((delta) => ({
      type: 'response.reasoning_summary_text.delta',
      ...at,
      delta,
    })),
    { type: 'response.reasoning_summary_text.done', ...at, text: summary },
    { type: 'response.reasoning_summary_part.done', ...at, part: done },
    {
      type: 'response.output_item.done',
      output_index: 0,
      item: { type: 'reasoning', id, summary: [done], encrypted_content: `enc-stand-in-${n}` },
    },
  ];
}

/** The text of the last user input item of a Responses request. */
function lastUserText(body: { input?: unknown }): string {
  const items = Array.isArray(body.input)
    ? (body.input as { role?: string; content?: { type?: string; text?: string }[] }[])
    : [];
  const last = [...items].reverse().find((i) => i.role === 'user');
  const text = (last?.content ?? []).map((c) => c.text ?? '').join('\n');
  return text.trim().split('\n').filter(Boolean).pop() ?? '';
}

/** The whole text of an input message (its text parts joined). */
function userText(item: unknown): string {
  const content = (item as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as { text?: string }[]).map((c) => c.text ?? '').join('\n') : '';
}

/** codex's config pointing it at a stand-in: a model provider of its own (the key in CODEX_API_KEY). */
export function codexStandInConfig(url: string, streamRetries = 0): string[] {
  return [
    'model_provider="standin"',
    `model_providers.standin={name="standin",base_url="${url}/v1",env_key="CODEX_API_KEY",wire_api="responses",supports_websockets=false,request_max_retries=0,stream_max_retries=${streamRetries}}`,
  ];
}

/** codex's environment for a stand-in: a dummy key. */
export const CODEX_STAND_IN_ENV = { CODEX_API_KEY: 'sk-dummy-000' };

export async function startResponsesStandIn(): Promise<ResponsesStandIn> {
  const state: ResponsesStandIn = { url: '', requests: [], mode: 'text', latencyMs: 0, close: async () => {} };
  const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    // codex tries a WebSocket first; refusing the upgrade makes it fall back to HTTP + SSE.
    if (req.method !== 'POST' || !path.endsWith('/responses')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ResponsesStandIn['requests'][number];
    state.requests.push(body);
    if (state.mode !== 'text') {
      const status = Number(state.mode);
      const message =
        status === 401
          ? 'Incorrect API key provided: sk-dummy.'
          : status === 429
            ? "You've hit your usage limit."
            : 'stand-in failure';
      res.writeHead(status, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message, type: 'invalid_request_error', code: status === 401 ? 'invalid_api_key' : null },
        }),
      );
      return;
    }
    if (state.latencyMs > 0) await new Promise((r) => setTimeout(r, state.latencyMs));
    const n = state.requests.length;
    const items = Array.isArray(body.input)
      ? (body.input as { type?: string; role?: string; output?: unknown; tools?: unknown }[])
      : [];
    // The model calls tools on a new user turn and answers results in text: what counts is the
    // input's last user message or tool output (with native history, earlier rounds' outputs come
    // before the last user message), and the outputs after that message are the ones answered.
    const lastUser = items.findLastIndex((i) => i.role === 'user');
    const outputs = items
      .slice(lastUser + 1)
      .filter((i) => i.type === 'function_call_output')
      .map((i) =>
        Array.isArray(i.output) ? ((i.output as { text?: string }[]).at(-1)?.text ?? '') : String(i.output ?? ''),
      );
    const offered = JSON.stringify([body.tools ?? [], items.filter((i) => i.type === 'additional_tools')]).includes(
      '"name":"mcp__olp"',
    );
    // A fresh turn carries the history rendered into its prompt: it answers results when the
    // prompt's last turn is one.
    const rendered = endsWithToolResult(userText(items[lastUser]));
    const calls = state.toolCalls && offered && outputs.length === 0 && !rendered ? state.toolCalls : [];
    // An output schema (text.format json_schema): the reply is {"heard": <the last user line>}.
    const format = (body as { text?: { format?: { type?: string } } }).text?.format;
    const text =
      format?.type === 'json_schema'
        ? JSON.stringify({ heard: lastUserText(body).slice(-60) })
        : outputs.length > 0
          ? `responses stand-in got: ${outputs.join(' | ')}`
          : `responses stand-in heard: ${lastUserText(body).slice(-60)}`;
    const thought = calls.length === 0 && state.reasoning !== undefined ? reasoningEvents(n, state.reasoning) : [];
    const events = [
      { type: 'response.created', response: { id: `resp_${n}` } },
      ...thought,
      ...calls.flatMap((c, i) => {
        const item = {
          type: 'function_call',
          id: `fc_${n}_${i}`,
          call_id: `call_${n}_${i}`,
          name: c.name,
          namespace: 'mcp__olp',
          arguments: JSON.stringify(c.arguments),
          status: 'completed',
        };
        return [
          {
            type: 'response.output_item.added',
            output_index: i,
            item: { ...item, arguments: '', status: 'in_progress' },
          },
          { type: 'response.output_item.done', output_index: i, item },
        ];
      }),
      ...(calls.length > 0
        ? []
        : [
            {
              type: 'response.output_item.done',
              item: { type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text }] },
            },
          ]),
      {
        type: 'response.completed',
        response: {
          id: `resp_${n}`,
          usage: {
            input_tokens: 1200,
            input_tokens_details: { cached_tokens: 200 },
            output_tokens: 12,
            output_tokens_details: { reasoning_tokens: 4 },
            total_tokens: 1212,
          },
        },
      },
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const cut = calls.length === 0 && state.cut && state.cut.times > 0 ? state.cut : undefined;
    if (cut) cut.times--;
    if (calls.length === 0 && (state.deltas || cut)) {
      const send = (e: Record<string, unknown>) =>
        res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
      const said = cut?.text ?? text;
      const item = { type: 'message', role: 'assistant', id: `msg_${n}`, status: 'in_progress', content: [] };
      send(events[0]!);
      send({ type: 'response.output_item.added', output_index: 0, item });
      send({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      for (const [i, piece] of (said.match(/.{1,6}/gs) ?? []).entries()) {
        if (cut && i === cut.afterDeltas) {
          // Let the deltas so far reach the CLI before the cut.
          await new Promise((r) => setTimeout(r, 50));
          if (cut.how === 'reset') res.socket?.resetAndDestroy();
          else
            res.end(
              'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_\n\n',
            );
          return;
        }
        if (state.deltaMs && i > 0) await new Promise((r) => setTimeout(r, state.deltaMs));
        // The CLI closed the stream (its turn was interrupted): nothing more to send.
        if (res.destroyed) return;
        send({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: piece });
      }
      send({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text: said });
      send({
        type: 'response.content_part.done',
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: said, annotations: [] },
      });
      send({
        type: 'response.output_item.done',
        output_index: 0,
        item: { ...item, status: 'completed', content: [{ type: 'output_text', text: said, annotations: [] }] },
      });
      if (cut) {
        await new Promise((r) => setTimeout(r, 50));
        if (cut.how === 'reset') res.socket?.resetAndDestroy();
        else res.end('event: response.completed\ndata: {"type":"response.comp\n\n');
        return;
      }
      send(events.at(-1)!);
      res.end();
      return;
    }
    for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    res.end();
  });
  const { url, close } = await listenLoopback(server);
  state.url = url;
  state.close = close;
  return state;
}
