// The Messages writers on a tiny express app, each request answered by a script of the core's
// events: the response side alone, for Anthropic clients (the SDK, the real claude binary) to
// read. The route does what olp's Messages route does around the writers: errors thrown before
// the first byte are rendered by toAnthropicError.
import { createServer } from 'node:http';
import express from 'express';
import type { ConversationEvent, ConversationResult } from '../../src/conversation/index.js';
import { errorHeaders, type ProxyError } from '../../src/errors/index.js';
import { toAnthropicError, writeMessagesJson, writeMessagesStream } from '../../src/wire/index.js';
import { listenLoopback } from './listen.js';

/** A number is a pause (ms) between events. */
export type MessagesStep = ConversationEvent | number;

export interface MessagesScript {
  steps: MessagesStep[];
  end: ConversationResult;
}

/** What a client sent (the parts the scripts and tests read). */
export interface MessagesRequestBody {
  model: string;
  stream?: boolean;
  tools?: { name: string }[];
  messages: { role: string; content: unknown }[];
}

export interface ScriptedMessages {
  url: string;
  /** The bodies of the POST /v1/messages requests, in order. */
  requests: MessagesRequestBody[];
  close(): Promise<void>;
}

async function* play(script: MessagesScript): AsyncGenerator<ConversationEvent, ConversationResult> {
  for (const step of script.steps) {
    if (typeof step === 'number') await new Promise((r) => setTimeout(r, step));
    else yield step;
  }
  return script.end;
}

/** Listens on loopback; `pick` scripts each Messages request; other paths get `{}` (claude's probes). */
export async function startScriptedMessages(
  pick: (body: MessagesRequestBody) => MessagesScript,
  opts: { keepaliveMs: () => number },
): Promise<ScriptedMessages> {
  const requests: MessagesRequestBody[] = [];
  const app = express();
  app.use(express.json({ limit: '50mb' }));
  app.post('/v1/messages/count_tokens', (_req, res) => {
    res.json({ input_tokens: 100 });
  });
  app.post('/v1/messages', async (req, res) => {
    const body = req.body as MessagesRequestBody;
    requests.push(body);
    res.setHeader('x-request-id', 'req_test');
    const meta = {
      id: `msg_test${requests.length}`,
      model: body.model,
      clientTimeoutMs: 5000,
      keepaliveMs: opts.keepaliveMs(),
    };
    const events = play(pick(body));
    try {
      if (body.stream) await writeMessagesStream(res, events, meta);
      else await writeMessagesJson(res, events, meta);
    } catch (err) {
      const e = toAnthropicError(err as ProxyError);
      res
        .status(e.status)
        .set(errorHeaders(err as ProxyError))
        .json(e.body);
    }
  });
  app.use((_req, res) => {
    res.json({});
  });
  const listening = await listenLoopback(createServer(app));
  return { url: listening.url, requests, close: listening.close };
}
