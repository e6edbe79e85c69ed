import type { Admission } from '../admit/index.js';
import type { Backend, Detector, StopReason, Usage } from '../backends/index.js';
import type { Message, Reasoning } from '../core/index.js';
import type { ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { ModelRegistry } from '../models/index.js';
import type { Channel } from 'node:diagnostics_channel';
import type { Principal } from '../auth/index.js';
import type { Plans } from '../plan/index.js';
import type { Logins } from '../logins/index.js';
import type { SessionPool } from '../sessions/index.js';
import type { Store } from '../store/index.js';
import type { ImageLimits, ResponseFormat, TokenCalibration } from '../transcript/index.js';
import type { RunMode, TurnRunner } from '../run/index.js';
import type { ToolRequest } from '../tools/index.js';

/** Everything a conversation needs; built once by the composition root. */
export interface ConversationDeps {
  store: Store;
  registry: ModelRegistry;
  backends: readonly Backend[];
  /** The run stage: claims parked turns and runs each turn (how it runs is decided there). */
  runner: TurnRunner;
  admission: Admission;
  /** Absent when sessions are off: every request then runs ephemeral. */
  sessions: SessionPool | undefined;
  fallbacks: Readonly<Record<string, readonly string[]>>;
  detector: Detector;
  imageLimits: ImageLimits;
  /** Prompt budget per model id or backend id. */
  contextTokens: Readonly<Record<string, number>>;
  contextOverflow: 'refuse' | 'trim';
  /** Characters per token as the provider counts them, learnt from earlier turns (four until then). */
  calibration?: TokenCalibration | undefined;
  /** The logins' plan states (src/plan). */
  plans?: Plans | undefined;
  /** `--member-logins`: `required` refuses a member key on the machine's login (absent: preferred). */
  memberLogins?: 'required' | 'preferred' | 'off' | undefined;
  /** The keys' logins (src/logins): absent, every key runs on the machine's own login. */
  logins?: Logins | undefined;
  /**
   * Where each finished request's result is published (a `FinishedRequest`), once its ledger row
   * is written: metrics and other observers subscribe in the composition root.
   */
  finished?: Channel | undefined;
}

/** Which wire format a request came in; recorded in its ledger row. */
export type Endpoint = 'chat.completions' | 'responses' | 'messages';

/** A validated request, in no wire format: the conversation (the core's messages) and its settings. */
export interface ConversationInput {
  model: string;
  messages: Message[];
  responseFormat?: ResponseFormat | undefined;
  maxOutputTokens?: number | undefined;
  /** How much the model thinks, and whether its thinking is shown (absent: the CLI's default, none shown). */
  reasoning?: Reasoning | undefined;
  /** The client's functions and tool choice (none offered: undefined). */
  tools?: ToolRequest | undefined;
  /** The reply ends before the first of these (chat's `stop`, Messages' `stop_sequences`). */
  stopSequences?: readonly string[] | undefined;
  /**
   * A request beside the key's conversations, as its client marks it: `background` (a title, a
   * check: one run, no session slot, no live CLI), or a `subagent`'s conversation (its own slot,
   * never one whose conversation is going on). Absent: a conversation like any other.
   */
  kind?: RequestKind | undefined;
}

/** What a request is beside the client's main conversation (see `ConversationInput.kind`). */
export type RequestKind = 'background' | 'subagent';

/** Who asks and how the request arrived. */
export interface RequestMeta {
  requestId: string;
  endpoint: Endpoint;
  /** Errors after the first text go in-band (the status was already 200). */
  stream: boolean;
  log: Logger;
  /** Date.now() at arrival. */
  startedAt: number;
  /** performance.now() at arrival. */
  started: number;
  /** The usage page's address as the client reached olp (`http://host/olp`), for messages that send people there. */
  pageUrl?: (() => string) | undefined;
}

export interface SessionNote {
  mode: string;
  id?: string;
  reason?: string;
  /** A new conversation: where it parts from the closest one a slot holds (its turn, and why). */
  diverged?: { at: number; why: string };
}

/** What a conversation yields while it runs. Wire adapters turn these into their format. */
export type ConversationEvent =
  /** A model is answering (after any fallback): the last moment to set response headers. */
  | {
      type: 'started';
      model: string;
      backend: string;
      session: SessionNote;
      headers: Readonly<Record<string, string>>;
      /**
       * olp's estimate of the prompt's tokens (a format that says them before the CLI has: Anthropic's
       * `message_start`).
       */
      promptTokens: number;
    }
  | { type: 'text'; text: string }
  /**
   * The model's thinking (only when the request shows it: `Reasoning.shown`): a piece of its text,
   * or (text '') the block's signature, which ends the block. Never part of the reply's text.
   */
  | { type: 'thinking'; text: string; signature?: string }
  /** The model calls one of the client's functions (`index` counts this response's calls from 0). */
  | { type: 'tool_call'; index: number; id: string; name: string }
  | { type: 'tool_args'; index: number; text: string };

export type Outcome = 'ok' | 'error' | 'timeout' | 'client_aborted' | 'rejected';

/** How a conversation ended; the one source of its ledger row and log line. */
export interface ConversationResult {
  readonly outcome: Outcome;
  readonly error: ProxyError | null;
  /** Why the answer ended (`error` when it failed). */
  readonly stopReason: StopReason;
  /** The CLI's usage, or olp's estimate (`estimated`) for a client that left before it reported any. */
  readonly usage: Usage | null;
  readonly estimated: boolean;
  readonly model: string | null;
  readonly backend: string | null;
  readonly servedModel: string | null;
  readonly session: SessionNote | null;
  /** How the CLI turn ran (`cold`, `resumed`, `warm`); null when none ran. */
  readonly run: RunMode | null;
  /** The turn drew on the plan's paid extra usage (the CLI said so). */
  readonly overage: boolean;
  readonly queueMs: number | null;
  readonly firstTokenMs: number | null;
  readonly durationMs: number;
  /** The HTTP status the client got (499 when it left). */
  readonly status: number;
  /** Headers for the response: the key's `x-ratelimit-*` and the session mode. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What `ConversationDeps.finished` carries: a request's result, whose it was, and how it came. */
export interface FinishedRequest {
  readonly principal: Principal;
  readonly meta: RequestMeta;
  readonly result: ConversationResult;
}

/** A request of one key, from its arrival to its ledger row. */
export interface Conversation {
  /** Runs the conversation; never throws: every failure ends in the result's `error`. */
  run(input: ConversationInput, signal: AbortSignal): AsyncGenerator<ConversationEvent, ConversationResult>;
  /**
   * The request's first stage: the adapter's parse of its body. What it returns goes on to `run`;
   * a request it refuses (or one over its key's rate, which the key hears first) ends here with its
   * ledger row, and the error to send is thrown.
   */
  accept<T>(parse: () => T): T;
  /** Set once the conversation has ended, however it ended. */
  readonly result: ConversationResult | undefined;
}
