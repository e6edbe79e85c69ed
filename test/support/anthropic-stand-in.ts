// A small stand-in for the Anthropic Messages API on loopback, so the real `claude` binary can be
// run end to end with a dummy key and nothing leaving the machine (ANTHROPIC_BASE_URL).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpServer } from '../../src/http/index.js';
import { listenLoopback } from './listen.js';

export type StandInMode = 'text' | '401' | '429' | '500' | 'slow';

export interface RecordedRequest {
  path: string;
  /** The credential it carried (`x-api-key` or `Authorization: Bearer`; both joined by ' + '); null for none. */
  credential: string | null;
  body: {
    model?: string;
    system?: unknown;
    tools?: unknown[];
    messages?: { role: string; content: unknown }[];
    stream?: boolean;
    max_tokens?: number;
    thinking?: { type: string; budget_tokens?: number; display?: string };
    output_config?: { effort?: string };
  };
}

export interface StandIn {
  url: string;
  requests: RecordedRequest[];
  mode: StandInMode;
  /** Simulated provider time before a streamed reply starts (ms; default 0). */
  latencyMs: number;
  /**
   * When set and the request offers tools: the model's answer to a user text is these calls (to the
   * offered tool whose name ends in `__<name>`, arguments streamed as input_json_delta); to tool
   * results (the last message's tool_result blocks, or a rendered prompt whose last turn is a
   * result) it answers in text, `echo: <result> | <result>`. Only the last message counts, so every
   * user turn of a conversation calls them again, with earlier rounds in the history or not.
   */
  toolCalls?: { name: string; input: Record<string, unknown> }[] | undefined;
  /**
   * A subscription plan's window, sent as the `anthropic-ratelimit-unified-*` headers claude reads
   * with an OAuth token (2.1.197): `rejected` answers 429 (the window is spent), the others answer
   * as usual with the window's status and utilization.
   */
  plan?:
    | {
        status: 'allowed' | 'allowed_warning' | 'rejected';
        claim: 'five_hour' | 'seven_day';
        resetInS: number;
        utilization?: number;
        surpassedThreshold?: number;
      }
    | undefined;
  /**
   * Cuts the next `times` streamed text replies after `afterDeltas` text deltas (each cut counts
   * one down): `reset` destroys the connection, `malformed` sends an SSE event whose data is not
   * JSON and ends the response. The CLI's retry then gets the whole reply. `text`, when set, is
   * the cut reply's text (else the real one: a retry that says the same again).
   */
  cut?: { how: 'reset' | 'malformed'; afterDeltas: number; times: number; text?: string } | undefined;
  /**
   * A model's context: a request's input tokens are the characters of its text (system prompt,
   * text blocks, tool inputs and results) at `charsPerToken`, reported as its usage; past `limit`
   * it is answered as Anthropic answers a prompt too long (400 invalid_request_error,
   * "prompt is too long: N tokens > M maximum"). `refused` counts those answers.
   */
  context?: { charsPerToken: number; limit: number; refused: number } | undefined;
  /**
   * When set, a streamed text reply to a request whose thinking is not off starts with a thinking
   * block of this text (its signature `sig-stand-in`), as a thinking model's does.
   */
  thinking?: string | undefined;
  close(): Promise<void>;
}

/** The characters of a request's text, as the stand-in's context counts them. */
export function textChars(body: RecordedRequest['body']): number {
  let n = 0;
  const walk = (v: unknown): void => {
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const b = v as { type?: string; text?: unknown; content?: unknown; input?: unknown };
      if (typeof b.text === 'string') n += b.text.length;
      if (b.content !== undefined) walk(b.content);
      if (b.input !== undefined) n += JSON.stringify(b.input).length;
    }
  };
  walk(body.system);
  walk(body.messages);
  return n;
}

/** The unified rate-limit headers of a plan window (the names claude 2.1.197 reads). */
function planHeaders(plan: NonNullable<StandIn['plan']>): Record<string, string> {
  const h = 'anthropic-ratelimit-unified-';
  const reset = String(Math.floor(Date.now() / 1000) + plan.resetInS);
  const short = plan.claim === 'five_hour' ? '5h' : '7d';
  return {
    [`${h}status`]: plan.status,
    [`${h}reset`]: reset,
    [`${h}representative-claim`]: plan.claim,
    ...(plan.utilization !== undefined
      ? { [`${h}${short}-utilization`]: String(plan.utilization), [`${h}${short}-reset`]: reset }
      : {}),
    ...(plan.surpassedThreshold !== undefined
      ? { [`${h}${short}-surpassed-threshold`]: String(plan.surpassedThreshold) }
      : {}),
  };
}

function lastUserText(body: RecordedRequest['body']): string {
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  // claude 2.1.332 adds "[Image: source: <file>]" after an image block.
  const texts = (last.content as { type: string; text?: string }[]).filter(
    (b) =>
      b.type === 'text' && b.text && !b.text.startsWith('<system-reminder>') && !b.text.startsWith('[Image: source:'),
  );
  return texts.map((b) => b.text).join('\n');
}

/**
 * Whether a prompt of olp's transcript format ends with a tool result: its last closing turn tag
 * is `</tool_result>` (a fresh turn answering results), not `</user>` (a new user turn after
 * earlier tool rounds), so a conversation's later user turns call tools again.
 */
export function endsWithToolResult(text: string): boolean {
  const tags = text.match(/<\/(user|assistant|tool_result)>/g);
  return tags?.at(-1) === '</tool_result>';
}

/**
 * The reply the stand-in gives: derived from the last user text so tests can check what arrived
 * (the last line that is not one of olp's transcript tags, as a model answers the last turn).
 */
export function standInReply(userText: string): string {
  const tail =
    userText
      .trim()
      .split('\n')
      .filter((l) => l && !/^<\/?(user|assistant|conversation)>$/.test(l.trim()))
      .pop() ?? '';
  return `stand-in heard: ${tail.slice(-60)}`;
}

/**
 * A request's API credential: its `x-api-key` (an API key) or its `Authorization: Bearer` token
 * (OAuth); both, joined by ' + ', when it carried both.
 */
function credentialOf(req: IncomingMessage): string | null {
  const key = req.headers['x-api-key'];
  const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const found = [typeof key === 'string' ? key : undefined, bearer].filter((c): c is string => !!c);
  return found.length ? found.join(' + ') : null;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * claude's environment for a stand-in: its address, no retries, and a dummy API key or (`oauth`)
 * a subscription-style token.
 */
export function claudeStandInEnv(url: string, login: 'api-key' | 'oauth' = 'api-key'): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    ...(login === 'oauth' ? { CLAUDE_CODE_OAUTH_TOKEN: 'oauth-dummy-000' } : { ANTHROPIC_API_KEY: 'sk-ant-dummy-000' }),
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
}

export async function startAnthropicStandIn(mode: StandInMode = 'text'): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  const state: StandIn = { url: '', requests, mode, latencyMs: 0, toolCalls: undefined, close: async () => {} };

  const server = createHttpServer(async (req: IncomingMessage, res: ServerResponse) => {
    const raw = req.method === 'POST' ? await readBody(req) : '';
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'POST') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    let body: RecordedRequest['body'] = {};
    try {
      body = JSON.parse(raw) as RecordedRequest['body'];
    } catch {
      // keep empty
    }
    requests.push({ path, credential: credentialOf(req), body });
    if (state.plan && !path.endsWith('/count_tokens')) {
      for (const [name, value] of Object.entries(planHeaders(state.plan))) res.setHeader(name, value);
      if (state.plan.status === 'rejected') {
        res.writeHead(429, { 'content-type': 'application/json', 'request-id': 'req_stand_in_429' }).end(
          JSON.stringify({
            type: 'error',
            error: { type: 'rate_limit_error', message: 'stand-in: the plan window is spent' },
          }),
        );
        return;
      }
    }
    const counted = state.context ? Math.ceil(textChars(body) / state.context.charsPerToken) : undefined;
    if (path.endsWith('/count_tokens')) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ input_tokens: counted ?? Math.ceil(raw.length / 4) }));
      return;
    }
    if (state.context && counted! > state.context.limit) {
      state.context.refused++;
      res.writeHead(400, { 'content-type': 'application/json', 'request-id': 'req_stand_in_too_long' }).end(
        JSON.stringify({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: `prompt is too long: ${counted} tokens > ${state.context.limit} maximum`,
          },
          request_id: 'req_stand_in_too_long',
        }),
      );
      return;
    }
    if (state.mode === '401' || state.mode === '429' || state.mode === '500') {
      const type = { '401': 'authentication_error', '429': 'rate_limit_error', '500': 'api_error' }[state.mode];
      res
        .writeHead(Number(state.mode), { 'content-type': 'application/json', 'request-id': 'req_stand_in' })
        .end(JSON.stringify({ type: 'error', error: { type, message: `stand-in ${state.mode}` } }));
      return;
    }
    const id = `msg_standin_${requests.length}`;
    const offered = (body.tools ?? []) as { name?: string }[];
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    const results = Array.isArray(lastUser?.content)
      ? (lastUser.content as { type: string; content?: unknown }[]).filter((b) => b.type === 'tool_result')
      : [];
    // Structured output: claude offers its StructuredOutput tool; the model calls it with
    // {"heard": <the last user line>} (one call: the CLI checks it and ends the turn).
    if (offered.some((t) => t.name === 'StructuredOutput') && body.stream) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': 'req_stand_in',
      });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const usage = { input_tokens: 31, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
      send('message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      });
      send('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: {
          type: 'tool_use',
          id: `toolu_structured_${requests.length}`,
          name: 'StructuredOutput',
          input: {},
        },
      });
      for (const piece of JSON.stringify({ heard: lastUserText(body) }).match(/.{1,5}/gs) ?? [])
        send('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
      send('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 8 },
      });
      send('message_stop', { type: 'message_stop' });
      res.end();
      return;
    }
    // The model calls tools on a new user turn and answers results in text. A fresh turn carries
    // the history rendered into its prompt: it answers results when the prompt's last turn is one.
    const rendered = endsWithToolResult(lastUserText(body));
    if (state.toolCalls && offered.length > 0 && results.length === 0 && !rendered && body.stream) {
      if (state.latencyMs > 0) await new Promise((r) => setTimeout(r, state.latencyMs));
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': 'req_stand_in',
      });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const usage = { input_tokens: 21, cache_creation_input_tokens: 7, cache_read_input_tokens: 11, output_tokens: 1 };
      send('message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      });
      for (const [i, call] of state.toolCalls.entries()) {
        const name = offered.find((t) => t.name === call.name || t.name?.endsWith(`__${call.name}`))?.name ?? call.name;
        send('content_block_start', {
          type: 'content_block_start',
          index: i,
          content_block: { type: 'tool_use', id: `toolu_standin_${requests.length}_${i}`, name, input: {} },
        });
        const json = JSON.stringify(call.input);
        for (const piece of json.match(/.{1,5}/gs) ?? [])
          send('content_block_delta', {
            type: 'content_block_delta',
            index: i,
            delta: { type: 'input_json_delta', partial_json: piece },
          });
        send('content_block_stop', { type: 'content_block_stop', index: i });
      }
      send('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 6 },
      });
      send('message_stop', { type: 'message_stop' });
      res.end();
      return;
    }
    const resultText = results
      .map((r) =>
        typeof r.content === 'string'
          ? r.content
          : Array.isArray(r.content)
            ? (r.content as { text?: string }[]).map((c) => c.text ?? '').join('')
            : '',
      )
      .join(' | ');
    const text = results.length ? `echo: ${resultText}` : standInReply(lastUserText(body));
    const usage =
      counted !== undefined
        ? { input_tokens: counted, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 }
        : { input_tokens: 21, cache_creation_input_tokens: 7, cache_read_input_tokens: 11, output_tokens: 0 };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { ...usage, output_tokens: 9 },
        }),
      );
      return;
    }
    if (state.latencyMs > 0) await new Promise((r) => setTimeout(r, state.latencyMs));
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': 'req_stand_in',
    });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    const thinks = state.thinking !== undefined && body.thinking?.type !== 'disabled';
    if (thinks) {
      const block = (delta: Record<string, string>) =>
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta });
      send('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      for (const p of state.thinking!.match(/.{1,6}/gs) ?? []) block({ type: 'thinking_delta', thinking: p });
      block({ type: 'signature_delta', signature: 'sig-stand-in' });
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
    }
    const at = thinks ? 1 : 0;
    send('content_block_start', { type: 'content_block_start', index: at, content_block: { type: 'text', text: '' } });
    const cut = state.cut && state.cut.times > 0 ? state.cut : undefined;
    if (cut) cut.times--;
    const pieces = (cut?.text ?? text).match(/.{1,6}/gs) ?? [];
    for (const [i, p] of pieces.entries()) {
      if (state.mode === 'slow') await new Promise((r) => setTimeout(r, 200));
      if (res.destroyed) return;
      if (cut && i === cut.afterDeltas) {
        // Let the deltas so far reach the CLI before the cut.
        await new Promise((r) => setTimeout(r, 50));
        if (cut.how === 'reset') res.socket?.resetAndDestroy();
        else
          res.end(
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de\n\n',
          );
        return;
      }
      send('content_block_delta', { type: 'content_block_delta', index: at, delta: { type: 'text_delta', text: p } });
    }
    send('content_block_stop', { type: 'content_block_stop', index: at });
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    });
    send('message_stop', { type: 'message_stop' });
    res.end();
  });
  const { url, close } = await listenLoopback(server);
  state.url = url;
  state.close = close;
  return state;
}
