// The wire adapters in-process on a scripted conversation: the real app (routes, auth, errors,
// CORS, SSE framing) over an in-memory store, with `open` replaced by a script of the core's
// wire-neutral events. No state dir, no daemon, no CLI: for tests of framing, errors before and
// after the first byte, and headers.
import { Writable } from 'node:stream';
import { createAdmission } from '../../src/admit/index.js';
import { createBackends, createDetector } from '../../src/backends/index.js';
import { parseConfig, type ConfigKey } from '../../src/config/index.js';
import type {
  Conversation,
  ConversationEvent,
  ConversationInput,
  ConversationResult,
} from '../../src/conversation/index.js';
import { backendFailed, backendNotLoggedIn, toProxyError, type ProxyError } from '../../src/errors/index.js';
import {
  createApp,
  createHttpServer,
  createLifecycle,
  expressMessages,
  type OpenConversation,
} from '../../src/http/index.js';
import { createLogger } from '../../src/log/index.js';
import { createModelRegistry } from '../../src/models/index.js';
import { openMemoryStore, type Store } from '../../src/store/index.js';
import { listenLoopback } from './listen.js';
import { FAKE_CLAUDE, FAKE_CODEX } from './paths.js';

/** What one conversation does: the events it yields, then how it ends. */
export interface Script {
  events: ConversationEvent[];
  /** Set: the conversation fails with it (before the first byte when no event came first). */
  error?: ProxyError;
  /** Milliseconds between events (a slow CLI). */
  delayMs?: number;
}

const STARTED = (model: string): ConversationEvent => ({
  type: 'started',
  model,
  backend: 'claude',
  session: { mode: 'ephemeral' },
  headers: {},
  promptTokens: 12,
});

/** The text as the fake claude says it, in small deltas. */
function reply(model: string, text: string): ConversationEvent[] {
  const said = `Hello from fake claude. You said: ${text}`;
  return [STARTED(model), ...(said.match(/.{1,8}/gs) ?? []).map((t): ConversationEvent => ({ type: 'text', text: t }))];
}

/**
 * The default script, read from the last user message's `[[fake:…]]` marker as the fake CLIs
 * read it: `not-logged-in` fails before any text, `crash-mid-stream` after some;
 * `slow` waits 400 ms before each event.
 */
export function scriptFor(input: ConversationInput): Script {
  const last = input.messages.filter((m) => m.role === 'user').at(-1);
  const text = last?.parts.length === 1 && last.parts[0]!.type === 'text' ? last.parts[0]!.text : '';
  const marker = /\[\[fake:([a-z-]+)\]\]\s*/.exec(text);
  const said = text.replace(/\[\[fake:[a-z-]+\]\]\s*/, '');
  switch (marker?.[1]) {
    case 'not-logged-in':
      return { events: [], error: backendNotLoggedIn('claude', 'Not logged in', 'run `claude auth login`') };
    case 'slow':
      return { events: reply(input.model, said), delayMs: 400 };
    case 'crash-mid-stream':
      return { events: reply(input.model, said), error: backendFailed('claude', 'exited with code 1') };
    default:
      return { events: reply(input.model, said) };
  }
}

function resultOf(
  input: ConversationInput | null,
  outcome: ConversationResult['outcome'],
  error: ProxyError | null,
): ConversationResult {
  return {
    outcome,
    error,
    stopReason: { type: 'end' },
    usage: error
      ? null
      : { promptTokens: 10, completionTokens: 5, totalTokens: 15, cachedTokens: 0, reasoningTokens: 0, raw: {} },
    estimated: false,
    model: input?.model ?? null,
    backend: input ? 'claude' : null,
    servedModel: input?.model ?? null,
    session: null,
    run: null,
    overage: false,
    queueMs: 0,
    firstTokenMs: 0,
    durationMs: 0,
    status: outcome === 'client_aborted' ? 499 : (error?.status ?? 200),
    headers: {},
  };
}

/** An `open` that plays `pick(input)` for each request; `opened` counts the conversations. */
export function scriptedOpen(
  pick: (input: ConversationInput) => Script = scriptFor,
): OpenConversation & { opened: number } {
  const open = (): Conversation => {
    open.opened++;
    let result: ConversationResult | undefined;
    return {
      async *run(input, signal) {
        const script = pick(input);
        for (const ev of script.events) {
          if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
          if (signal.aborted) return (result = resultOf(input, 'client_aborted', null));
          yield ev;
        }
        return (result = resultOf(input, script.error ? 'error' : 'ok', script.error ?? null));
      },
      accept<T>(parse: () => T): T {
        try {
          return parse();
        } catch (err) {
          result = resultOf(null, 'rejected', toProxyError(err));
          throw result.error;
        }
      },
      get result() {
        return result;
      },
    };
  };
  open.opened = 0;
  return open;
}

export interface ScriptedApp {
  app: ReturnType<typeof createApp>;
  store: Store;
  /** An owner key's token. */
  token: string;
  logs: Record<string, unknown>[];
  close(): void;
}

/** The real app on a scripted conversation and an in-memory store, with one owner key. */
export function createScriptedApp(
  opts: { config?: Partial<Record<ConfigKey, unknown>>; open?: OpenConversation } = {},
): ScriptedApp {
  const config = parseConfig({
    readFile: false,
    env: {},
    overrides: { stateDir: '/nonexistent/olp-scripted', claudeBin: FAKE_CLAUDE, codexBin: FAKE_CODEX, ...opts.config },
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const store = openMemoryStore();
  const hostEnv = { PATH: process.env.PATH ?? '' };
  const { backends } = createBackends(config, hostEnv);
  const noWorkspaces = {
    create(): never {
      throw new Error('a scripted app runs no CLI');
    },
  };
  const app = createApp({
    logger: createLogger('debug', sink),
    bodyLimit: config.bodyLimit,
    corsOrigins: config.corsOrigins,
    clientTimeoutMs: config.clientTimeout * 1000,
    keepaliveMs: config.sseKeepalive * 1000,
    store,
    registry: createModelRegistry(backends, config.models),
    backends,
    detector: createDetector(hostEnv, new Map(), noWorkspaces, { timeoutMs: config.statusTimeout * 1000 }),
    lifecycle: createLifecycle(),
    admission: createAdmission({
      maxConcurrent: config.maxConcurrency,
      queueSize: config.queueSize,
      queueTimeoutMs: 1000,
      tokensSince: () => 0,
    }),
    open: opts.open ?? scriptedOpen(),
  });
  return { app, store, token: store.keys.add('tester', 'owner').token, logs, close: () => store.close() };
}

/** The scripted app behind olp's own HTTP server (body timeout, connection cap), listening on loopback. */
export async function startScriptedServer(opts: { config?: Partial<Record<ConfigKey, unknown>> } = {}) {
  const scripted = createScriptedApp(opts);
  const config = parseConfig({
    readFile: false,
    env: {},
    overrides: { stateDir: '/nonexistent/olp-scripted', ...opts.config },
  });
  const server = createHttpServer(scripted.app, {
    bodyTimeoutMs: config.bodyTimeout * 1000,
    maxClientConnections: config.maxClientConnections,
    messages: expressMessages(scripted.app),
  });
  const listening = await listenLoopback(server);
  return {
    ...scripted,
    url: listening.url,
    port: Number(new URL(listening.url).port),
    async close(): Promise<void> {
      await listening.close();
      scripted.close();
    },
  };
}
