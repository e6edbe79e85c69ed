import type { Response } from 'express';
import type { Usage } from '../backends/index.js';
import type { ErrorCode, ProxyError } from '../errors/index.js';
import { collectReply, type Events } from './reply.js';
import { ClientTooSlowError, createSseWriter } from './sse.js';

// PLACEHOLDER for the Messages writers (src/respond/messages-*.ts replace this file when merged):
// the whole reply is collected, then sent as one message, or streamed as one event per block.
// ANTHROPIC_ERRORS and toAnthropicError are meant to stay (the writers' module may take them over).

export interface MessagesMeta {
  id: string;
  model: string;
  clientTimeoutMs: number;
  keepaliveMs: number;
}

/** Anthropic's error `type` strings. */
type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

const bad = { status: 400, type: 'invalid_request_error' } as const;

/**
 * Each olp error code as Anthropic's status and type, chosen for what Claude Code does with them:
 * it retries 429 (honouring a `retry-after` of up to 60 s), 529 and every 5xx, up to ten times. A
 * failure that the same request meets again (a CLI not installed or not logged in, a login not set
 * up, a bad request, an unknown model) is therefore a 4xx, or each request would start ten CLIs:
 * not-logged-in and login-not-set-up are 403 `permission_error` (401 would make Claude Code tell the
 * user to run /login against Anthropic, which is not what is wrong), a CLI not installed or a
 * recording with no match 400. Full queues and an overloaded provider are 529 `overloaded_error`,
 * Anthropic's own "try again shortly"; a prompt over the model's budget is 413 `request_too_large`.
 */
export const ANTHROPIC_ERRORS: Readonly<Record<ErrorCode, { status: number; type: AnthropicErrorType }>> = {
  invalid_request: bad,
  invalid_json: bad,
  request_too_large: { status: 413, type: 'request_too_large' },
  malformed_request: bad,
  invalid_encoding: bad,
  invalid_path: bad,
  request_aborted: bad,
  request_timeout: { status: 408, type: 'timeout_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  too_many_connections: { status: 429, type: 'rate_limit_error' },
  client_read_timeout: { status: 408, type: 'timeout_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  key_expired: { status: 401, type: 'authentication_error' },
  key_disabled: { status: 403, type: 'permission_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  owner_only: { status: 403, type: 'permission_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  concurrency_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  budget_exceeded: { status: 429, type: 'rate_limit_error' },
  server_busy: { status: 529, type: 'overloaded_error' },
  queue_timeout: { status: 529, type: 'overloaded_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  response_not_found: { status: 404, type: 'not_found_error' },
  not_found: { status: 404, type: 'not_found_error' },
  context_length_exceeded: { status: 413, type: 'request_too_large' },
  unsupported_value: bad,
  unsupported_content: bad,
  invalid_image: bad,
  provider_invalid_request: bad,
  backend_not_installed: bad,
  backend_not_logged_in: { status: 403, type: 'permission_error' },
  login_not_set_up: { status: 403, type: 'permission_error' },
  backend_rate_limited: { status: 429, type: 'rate_limit_error' },
  plan_limit_reached: { status: 429, type: 'rate_limit_error' },
  backend_overloaded: { status: 529, type: 'overloaded_error' },
  backend_unavailable: { status: 529, type: 'overloaded_error' },
  backend_timeout: { status: 504, type: 'timeout_error' },
  backend_retry_mid_stream: { status: 502, type: 'api_error' },
  backend_error: { status: 502, type: 'api_error' },
  session_not_found: { status: 502, type: 'api_error' },
  // Unparseable CLI output: a 5xx, but with `x-should-retry: false` (the SDK's own retries honour it).
  backend_bad_output: { status: 502, type: 'api_error' },
  replay_no_match: bad,
  shutting_down: { status: 529, type: 'overloaded_error' },
  internal_error: { status: 500, type: 'api_error' },
};

/** A ProxyError in Anthropic's envelope, with its status and the retry headers olp sends with every error. */
export function toAnthropicError(e: ProxyError): {
  status: number;
  body: { type: 'error'; error: { type: string; message: string } };
  headers: Record<string, string>;
} {
  const { status, type } = ANTHROPIC_ERRORS[e.code];
  return {
    status,
    body: { type: 'error', error: { type, message: e.message } },
    headers: {
      'x-should-retry': e.retryable ? 'true' : 'false',
      ...(e.retryAfter !== undefined ? { 'retry-after': String(e.retryAfter) } : {}),
      ...e.headers,
    },
  };
}

type Reply = NonNullable<Awaited<ReturnType<typeof collectReply>>>;

/** The reply as one Anthropic `message`. */
function toMessage(meta: MessagesMeta, reply: Reply) {
  const r = reply.result;
  const content = [
    ...(reply.text ? [{ type: 'text' as const, text: reply.text }] : []),
    ...reply.toolCalls.map((c) => ({
      type: 'tool_use' as const,
      id: c.id,
      name: c.function.name,
      input: JSON.parse(c.function.arguments || '{}') as unknown,
    })),
  ];
  const stop = r.finishReason === 'tool_calls' ? 'tool_use' : r.finishReason === 'length' ? 'max_tokens' : 'end_turn';
  return {
    id: meta.id,
    type: 'message' as const,
    role: 'assistant' as const,
    model: r.servedModel ?? meta.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: toUsage(r.usage),
  };
}

function toUsage(u: Usage | null) {
  return {
    input_tokens: Math.max(0, (u?.promptTokens ?? 0) - (u?.cachedTokens ?? 0)),
    output_tokens: u?.completionTokens ?? 0,
    cache_read_input_tokens: u?.cachedTokens ?? 0,
    cache_creation_input_tokens: 0,
  };
}

/** PLACEHOLDER: collects the reply and sends one `message`; a failed conversation throws its error unsent. */
export async function writeMessagesJson(res: Response, events: Events, meta: MessagesMeta): Promise<void> {
  const reply = await collectReply(res, events);
  if (reply) res.status(200).json(toMessage(meta, reply));
}

/** PLACEHOLDER: collects the reply, then streams it as Anthropic's events, one block at a time. */
export async function writeMessagesStream(
  res: Response,
  events: Events,
  meta: MessagesMeta,
): Promise<ClientTooSlowError | undefined> {
  const reply = await collectReply(res, events);
  if (!reply) return undefined;
  const m = toMessage(meta, reply);
  const sse = createSseWriter(res, meta.clientTimeoutMs, meta.keepaliveMs);
  try {
    sse.start();
    await sse.send(
      {
        type: 'message_start',
        message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 0 } },
      },
      'message_start',
    );
    for (const [index, block] of m.content.entries()) {
      const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
      await sse.send({ type: 'content_block_start', index, content_block: start }, 'content_block_start');
      const delta =
        block.type === 'text'
          ? { type: 'text_delta', text: block.text }
          : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
      await sse.send({ type: 'content_block_delta', index, delta }, 'content_block_delta');
      await sse.send({ type: 'content_block_stop', index }, 'content_block_stop');
    }
    await sse.send(
      {
        type: 'message_delta',
        delta: { stop_reason: m.stop_reason, stop_sequence: null },
        usage: { output_tokens: m.usage.output_tokens },
      },
      'message_delta',
    );
    sse.end({ type: 'message_stop' }, 'message_stop');
    return undefined;
  } catch (err) {
    if (err instanceof ClientTooSlowError) return err;
    throw err;
  }
}
